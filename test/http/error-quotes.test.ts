import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ApiError, QUOTE_LIMIT } from "../../src/errors.js";
import { parseOrThrow } from "../../src/services/validate.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

const HUGE = "x".repeat(1_000_000);
const CUT = `${"x".repeat(QUOTE_LIMIT)}…`;

const get = async (a: TestApp, path: string) => {
  const response = await a.runplane.handler(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }));
  return { status: response.status, text: await response.text() };
};
const detailOf = (text: string): string => JSON.parse(text).errors[0].detail;

describe("what an error detail quotes of the request", () => {
  it("is at most QUOTE_LIMIT characters of an unknown include, then an ellipsis", async () => {
    const a = await createTestApp();
    const res = await get(a, `/api/v2/organizations/acme/tasks?include=${HUGE}`);
    expect(res.status).toBe(400);
    expect(detailOf(res.text)).toBe(`Invalid include parameter: ${CUT}`);
    expect(res.text.length).toBeLessThan(500);
  });

  it("is at most QUOTE_LIMIT characters of an unknown sort value", async () => {
    const a = await createTestApp();
    const res = await get(a, `/api/v2/agent-pools/apool-x/authentication-tokens?sort=${HUGE}`);
    expect(res.status).toBe(400);
    expect(detailOf(res.text)).toBe(`Invalid sort parameter: ${CUT}`);
  });

  it("keeps a short value whole", async () => {
    const a = await createTestApp();
    expect(detailOf((await get(a, "/api/v2/organizations/acme/tasks?include=nope")).text)).toBe("Invalid include parameter: nope");
  });

  it("is at most QUOTE_LIMIT characters of an attribute name a body sent", () => {
    let error: unknown;
    try {
      parseOrThrow(z.strictObject({}), { [HUGE]: 1 }, "/data/attributes");
    } catch (e) {
      error = e;
    }
    expect((error as ApiError).items[0]!.detail).toBe(`Unknown attribute: ${CUT}`);
  });

  it("never splits a character written as two UTF-16 units", async () => {
    const a = await createTestApp();
    const res = await get(a, `/api/v2/organizations/acme/tasks?include=${encodeURIComponent(`${"x".repeat(QUOTE_LIMIT - 1)}😀😀`)}`);
    expect(detailOf(res.text)).toBe(`Invalid include parameter: ${"x".repeat(QUOTE_LIMIT - 1)}…`);
  });

  it("is bounded for any detail, whatever a site forgot to cut", () => {
    const error = new ApiError("bad-request", { detail: `bad: ${HUGE}`, pointer: `/data/attributes/${HUGE}` });
    expect(error.items[0]!.detail!.length).toBeLessThanOrEqual(1_001);
    expect(error.items[0]!.pointer!.length).toBeLessThanOrEqual(1_001);
    expect(error.message.length).toBeLessThanOrEqual(1_001);
  });
});
