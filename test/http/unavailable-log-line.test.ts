import { describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { silentLogger } from "../../src/index.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import type { Storage } from "../../src/storage/types.js";
import { createTestApp, varsBody } from "../helpers/app.js";

// Found from outside: a 503's warning line carried no request id, so an operator could not match
// one answer (its X-Request-Id) and the audit trail to the log line that says why.
describe("the warning of a write answered 503", () => {
  it("names the request id the answer carries", async () => {
    const memory = createMemoryStorage();
    let away = false;
    const variables: Storage["variables"] = {
      ...memory.variables,
      insert: async (record) => {
        if (away) throw new StorageUnavailableError("connection reset", "ECONNRESET");
        return memory.variables.insert(record);
      },
    };
    const warn = vi.fn();
    const app = await createTestApp({ storage: { ...memory, variables } as Storage, logger: { ...silentLogger, warn } });
    away = true;
    const answer = await app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key: "k", value: "v", category: "env" }), headers: { "x-request-id": "deploy-7" } });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("x-request-id")).toBe("deploy-7");
    expect(warn).toHaveBeenCalledWith("storage unavailable", expect.objectContaining({ reason: "connection reset", requestId: "deploy-7" }));
  });
});
