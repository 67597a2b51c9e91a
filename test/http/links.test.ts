import { describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";

const PUBLIC = "https://runplane.example";
const TASKS = "/api/v2/organizations/acme/tasks";

/** A GET as a server would hand it over: the URL's origin is what the client's Host header said. */
const get = async (a: TestApp, url: string) => {
  const response = await a.runplane.handler(new Request(url, { headers: { authorization: `Bearer ${a.ownerToken}` } }));
  return { status: response.status, text: await response.text() };
};
const linksOf = (text: string) => JSON.parse(text).links as Record<string, string | null>;

describe("pagination links (D7)", () => {
  it("are built on the configured public URL, never on the request's Host", async () => {
    const a = await createTestApp({ publicUrl: PUBLIC });
    const res = await get(a, `http://evil.example${TASKS}?page%5Bnumber%5D=1&page%5Bsize%5D=5`);
    expect(res.status).toBe(200);
    const links = linksOf(res.text);
    for (const name of ["self", "first", "last"]) expect(links[name]).toBe(`${PUBLIC}${TASKS}?page%5Bnumber%5D=1&page%5Bsize%5D=5`);
    expect(res.text).not.toContain("evil.example");
  });

  it("name the route's canonical path, whatever spelling of it the request used", async () => {
    const a = await createTestApp({ publicUrl: PUBLIC });
    const res = await get(a, `http://localhost/api/v2/organizations/acme//tasks/?page%5Bnumber%5D=1&page%5Bsize%5D=5`);
    expect(res.status).toBe(200);
    expect(linksOf(res.text).self).toBe(`${PUBLIC}${TASKS}?page%5Bnumber%5D=1&page%5Bsize%5D=5`);
  });
});

describe("the parameters pagination links carry", () => {
  it("are only those the route accepts, in alphabetical order", async () => {
    const a = await createTestApp({ publicUrl: PUBLIC });
    const tasks = await get(a, `${PUBLIC}${TASKS}?foo=bar&page%5Bsize%5D=5&access_token=zzz&page%5Bnumber%5D=1`);
    expect(tasks.status).toBe(200);
    expect(linksOf(tasks.text).self).toBe(`${PUBLIC}${TASKS}?page%5Bnumber%5D=1&page%5Bsize%5D=5`);
    expect(tasks.text).not.toMatch(/foo|access_token|zzz/);

    const grants = "/api/v2/team-projects";
    const filtered = await get(a, `${PUBLIC}${grants}?page%5Bsize%5D=2&token=zzz&filter%5Bproject%5D%5Bid%5D=prj-a`);
    expect(filtered.status).toBe(200);
    expect(linksOf(filtered.text).self).toBe(`${PUBLIC}${grants}?filter%5Bproject%5D%5Bid%5D=prj-a&page%5Bnumber%5D=1&page%5Bsize%5D=2`);
    expect(filtered.text).not.toContain("zzz");
  });
});

describe("the include list pagination links carry", () => {
  it("is the canonical one, each name once, whatever the request repeated or how it spelled it", async () => {
    const a = await createTestApp({ publicUrl: PUBLIC });
    const asked = Array.from({ length: 1000 }, () => "workspace_tasks.workspace,workspace-tasks").join(",");
    const res = await get(a, `${PUBLIC}${TASKS}?include=${asked}`);
    expect(res.status).toBe(200);
    const self = `${PUBLIC}${TASKS}?include=workspace-tasks%2Cworkspace-tasks.workspace&page%5Bnumber%5D=1&page%5Bsize%5D=20`;
    expect(linksOf(res.text).self).toBe(self);
    expect(res.text.length).toBeLessThan(2_000);
  });

  it("and the filters are the values the route read", async () => {
    const a = await createTestApp({ publicUrl: PUBLIC });
    const grants = "/api/v2/team-projects";
    const res = await get(a, `${PUBLIC}${grants}?filter%5Bproject%5D%5Bid%5D=prj-a&filter%5Bproject%5D%5Bid%5D=zzz`);
    expect(res.status).toBe(200);
    expect(linksOf(res.text).self).toBe(`${PUBLIC}${grants}?filter%5Bproject%5D%5Bid%5D=prj-a&page%5Bnumber%5D=1&page%5Bsize%5D=20`);
  });
});
