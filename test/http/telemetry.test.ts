import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestApp } from "../helpers/app.js";
import { installOtel, type Otel } from "../helpers/otel.js";

// Every API request is a span and a count by route template and status.

let otel: Otel;
beforeEach(() => {
  otel = installOtel();
});
afterEach(() => otel.uninstall());

describe("request telemetry", () => {
  it("counts requests by route template and status, never by concrete path", async () => {
    const app = await createTestApp();
    expect((await app.call("GET", "/api/v2/organizations/acme/tasks")).status).toBe(200);
    expect((await app.call("GET", "/api/v2/tasks/task-nope")).status).toBe(404);
    expect((await app.call("GET", "/api/v2/no-such-thing")).status).toBe(404);
    const points = (await otel.points("runplane.http.requests")).map((p) => [p.attributes.route, p.attributes.status, p.value]);
    expect(points).toEqual(
      expect.arrayContaining([
        ["GET /organizations/:organization_name/tasks", 200, 1],
        ["GET /tasks/:task_id", 404, 1],
        ["unmatched", 404, 1],
      ]),
    );
    expect(JSON.stringify(points)).not.toContain("task-nope");
    expect(await otel.count("runplane.http.duration_seconds")).toBe(3);
  });

  it("counts callbacks by status (here an unknown result, 401 by D17a)", async () => {
    const app = await createTestApp();
    const res = await app.call("PATCH", "/api/v2/task-results/taskrs-0000000000000000/callback", { body: {}, token: "wrong" });
    expect(await otel.count("runplane.callbacks", { status: res.status })).toBe(1);
    expect(res.status).toBe(401);
  });

  it("opens a span per request named by its route", async () => {
    const app = await createTestApp();
    await app.call("GET", "/api/v2/organizations/acme/tasks");
    const [span] = otel.spans();
    expect(span?.name).toBe("runplane.http.request GET /organizations/:organization_name/tasks");
    expect(span?.attributes).toMatchObject({ "http.request.method": "GET", "http.response.status_code": 200 });
  });
});
