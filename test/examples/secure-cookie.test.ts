import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killSpawnedServers, spawnServer } from "../helpers/reference-server.js";

// The results page's session cookie behind a proxy that terminates TLS: the server sees plain HTTP,
// but its PUBLIC_URL says https, so browsers must only ever send the cookie over https.

const dirs: string[] = [];
afterAll(() => {
  killSpawnedServers();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("reference server results page cookie", () => {
  it("is Secure when PUBLIC_URL is https, though the request reached it over plain HTTP", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runplane-cookie-"));
    dirs.push(dir);
    const env = { ...process.env, DATABASE_URL: "", PORT: "0", INTEGRATION_PORT: "0", DATA_DIR: dir, PUBLIC_URL: "https://runplane.example" };
    const s = await spawnServer(["examples/server/main.ts"], env);
    // The banner prints the public API URL; the process listens on the port it bound.
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(s.output())?.[1] ?? new URL(s.api).port;
    const res = await fetch(`http://127.0.0.1:${port}/app/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ token: s.token!, next: "/app/" }).toString(),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/; Secure$/);
    await s.stop();
  });
});
