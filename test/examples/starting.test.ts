import { describe, expect, it } from "vitest";
import { startingResponse } from "../../examples/server/storage.js";

describe("the reference server while it starts", () => {
  it("answers every route with a JSON:API 503 that says when to try again", async () => {
    const res = startingResponse();
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const body = (await res.json()) as { errors: { status: string; detail: string }[] };
    expect(body.errors[0]).toMatchObject({ status: "503", detail: expect.stringContaining("starting") });
  });
});
