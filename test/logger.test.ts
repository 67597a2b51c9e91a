import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createConsoleLogger, createRunplane, silentLogger } from "../src/index.js";
import { logs } from "../src/logger.js";
import { createMemoryStorage } from "../adapters/memory/index.js";

const collect = () => {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
};

describe("console logger", () => {
  it("writes warnings and errors only by default", () => {
    const out = collect();
    const log = createConsoleLogger({ write: out.write });
    log.debug("d");
    log.info("i");
    log.warn("w", { id: "x" });
    log.error("e");
    expect(out.lines.map((l) => [l.level, l.message])).toEqual([["warn", "w"], ["error", "e"]]);
    expect(out.lines[0]).toMatchObject({ id: "x" });
    expect(Date.parse(out.lines[0]!.time as string)).not.toBeNaN();
  });

  it("writes info and debug when its level says so", () => {
    const out = collect();
    const log = createConsoleLogger({ level: "debug", write: out.write });
    log.debug("d");
    log.info("i");
    expect(out.lines.map((l) => l.level)).toEqual(["debug", "info"]);
  });

  it("says which levels it writes, so hot paths skip building events it would drop; any other logger is always called", () => {
    const log = createConsoleLogger({ level: "warn", write: () => undefined });
    expect(["debug", "info", "warn", "error"].map((level) => logs(log, level as never))).toEqual([false, false, true, true]);
    expect(logs(silentLogger, "error")).toBe(false);
    const host = { debug() {}, info() {}, warn() {}, error() {} };
    expect(logs(host, "debug")).toBe(true);
  });

  it("refuses an unknown level", () => {
    expect(() => createConsoleLogger({ level: "verbose" as never })).toThrow(/level/);
  });
});

describe("the logger option", () => {
  it("accepts a pino logger as it is, its fields landing in pino's line", () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: "warn" }, stream);
    // No keyring: runplane warns that it uses an ephemeral key.
    createRunplane({ storage: createMemoryStorage(), logger });
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(lines).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining("ephemeral key") })]);
        resolve();
      }),
    );
  });
});
