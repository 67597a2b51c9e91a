import { describe, expect, it } from "vitest";
import { CallbackBodySchema, CallbackSchema } from "../../src/schemas/run-tasks.js";

const outcome = (attributes: Record<string, unknown> = {}) => ({
  type: "task-result-outcomes",
  attributes: { "outcome-id": "CHK-001", description: "Bucket allows public read", ...attributes },
});

const nested = (outcomes: unknown[], attributes: Record<string, unknown> = {}) => ({
  data: {
    type: "task-results",
    attributes: { status: "failed", message: "1 failed", ...attributes },
    relationships: { outcomes: { data: outcomes } },
  },
});

// The exact wire form of go-tfe's callback marshal test and of the docs sample (reference section 3).
const goTfeBody = {
  data: {
    type: "task-results",
    attributes: {
      status: "failed",
      message: "1 passed, 0 skipped, 1 failed",
      url: "https://scanner.example/report/123",
    },
    relationships: {
      outcomes: {
        data: [
          {
            type: "task-result-outcomes",
            attributes: {
              "outcome-id": "CHK-001",
              description: "Bucket allows public read",
              body: "## Details\nMarkdown text…",
              url: "https://scanner.example/finding/CHK-001",
              tags: {
                Status: [{ label: "Denied", level: "error" }],
                Severity: [
                  { label: "High", level: "error" },
                  { label: "Recoverable", level: "info" },
                ],
                Owner: [{ label: "platform-team" }],
              },
            },
          },
        ],
      },
    },
  },
};

const pathsOf = (body: unknown): string[] => {
  const result = CallbackBodySchema.safeParse(body);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join("/"));
};

describe("callback schema", () => {
  it("accepts the go-tfe wire form and fills the default tag level", () => {
    const parsed = CallbackSchema.parse(goTfeBody);
    expect(parsed.status).toBe("failed");
    expect(parsed.message).toBe("1 passed, 0 skipped, 1 failed");
    expect(parsed.url).toBe("https://scanner.example/report/123");
    expect(parsed.outcomes).toHaveLength(1);
    expect(parsed.outcomes[0]).toEqual({
      outcomeId: "CHK-001",
      description: "Bucket allows public read",
      body: "## Details\nMarkdown text…",
      url: "https://scanner.example/finding/CHK-001",
      tags: {
        Status: [{ label: "Denied", level: "error" }],
        Severity: [
          { label: "High", level: "error" },
          { label: "Recoverable", level: "info" },
        ],
        Owner: [{ label: "platform-team", level: "none" }],
      },
    });
  });

  it("accepts the legacy top-level relationships form", () => {
    const parsed = CallbackSchema.parse({
      data: { type: "task-results", attributes: { status: "passed" } },
      relationships: { outcomes: { data: [outcome()] } },
    });
    expect(parsed.outcomes.map((o) => o.outcomeId)).toEqual(["CHK-001"]);
  });

  it("takes nested outcomes first, then legacy ones, when a body has both", () => {
    const parsed = CallbackSchema.parse({
      ...nested([outcome({ "outcome-id": "A" })]),
      relationships: { outcomes: { data: [outcome({ "outcome-id": "B" })] } },
    });
    expect(parsed.outcomes.map((o) => o.outcomeId)).toEqual(["A", "B"]);
  });

  it("accepts a bare running status with no message or outcomes", () => {
    const parsed = CallbackSchema.parse({ data: { type: "task-results", attributes: { status: "running" } } });
    expect(parsed).toEqual({ status: "running", message: undefined, url: undefined, outcomes: [] });
  });

  it("tolerates an outcome without a type and null optional attributes", () => {
    const parsed = CallbackSchema.parse(
      nested([{ attributes: { "outcome-id": "X", description: "d", body: null, url: null, tags: null } }], {
        message: null,
      }),
    );
    expect(parsed.message).toBeUndefined();
    expect(parsed.outcomes[0]).toEqual({ outcomeId: "X", description: "d", body: undefined, url: undefined, tags: {} });
  });

  it("accepts exactly 250 outcomes and rejects 251", () => {
    expect(CallbackBodySchema.safeParse(nested(Array.from({ length: 250 }, () => outcome()))).success).toBe(true);
    expect(pathsOf(nested(Array.from({ length: 251 }, () => outcome())))).toEqual(["data/relationships/outcomes/data"]);
  });

  it("rejects 251 outcomes split across the nested and legacy places", () => {
    const body = {
      ...nested(Array.from({ length: 200 }, () => outcome())),
      relationships: { outcomes: { data: Array.from({ length: 51 }, () => outcome()) } },
    };
    expect(pathsOf(body)).toEqual(["data/relationships/outcomes/data"]);
  });

  it("rejects an outcome without a description, pointing at it", () => {
    const withoutDescription = { type: "task-result-outcomes", attributes: { "outcome-id": "CHK-001" } };
    expect(pathsOf(nested([outcome(), withoutDescription]))).toEqual([
      "data/relationships/outcomes/data/1/attributes/description",
    ]);
  });

  it("rejects an empty description and an outcome-id of 0 or 65 characters", () => {
    expect(pathsOf(nested([outcome({ description: "" })]))).toHaveLength(1);
    expect(pathsOf(nested([outcome({ "outcome-id": "" })]))).toHaveLength(1);
    expect(pathsOf(nested([outcome({ "outcome-id": "x".repeat(65) })]))).toHaveLength(1);
    expect(pathsOf(nested([outcome({ "outcome-id": "x".repeat(64) })]))).toEqual([]);
  });

  it.each(["errored", "pending", "canceled", "PASSED", ""])("rejects the status %j", (status) => {
    expect(pathsOf(nested([], { status }))).toEqual(["data/attributes/status"]);
  });

  it.each(["task_results", "tasks", undefined])("rejects data.type %j", (type) => {
    const body = nested([]);
    expect(pathsOf({ data: { ...body.data, type } })).toEqual(["data/type"]);
  });

  it("rejects an outcome of the wrong type", () => {
    expect(pathsOf(nested([{ ...outcome(), type: "outcomes" }]))).toEqual(["data/relationships/outcomes/data/0/type"]);
  });

  it("accepts 10 tag keys and rejects 11", () => {
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`Key${i}`, [{ label: "x" }]]));
    expect(pathsOf(nested([outcome({ tags: tags(10) })]))).toEqual([]);
    expect(pathsOf(nested([outcome({ tags: tags(11) })]))).toEqual([
      "data/relationships/outcomes/data/0/attributes/tags",
    ]);
  });

  it("accepts a 32-character label and rejects a 33-character or empty one", () => {
    const withLabel = (label: string) => nested([outcome({ tags: { Severity: [{ label }] } })]);
    expect(pathsOf(withLabel("x".repeat(32)))).toEqual([]);
    expect(pathsOf(withLabel("x".repeat(33)))).toEqual([
      "data/relationships/outcomes/data/0/attributes/tags/Severity/0/label",
    ]);
    expect(pathsOf(withLabel(""))).toHaveLength(1);
  });

  it("rejects an unknown tag level", () => {
    expect(pathsOf(nested([outcome({ tags: { Severity: [{ label: "High", level: "critical" }] } })]))).toEqual([
      "data/relationships/outcomes/data/0/attributes/tags/Severity/0/level",
    ]);
  });

  it("rejects a tag key with no entries or more than 32", () => {
    expect(pathsOf(nested([outcome({ tags: { Severity: [] } })]))).toHaveLength(1);
    const many = Array.from({ length: 33 }, () => ({ label: "x" }));
    expect(pathsOf(nested([outcome({ tags: { Severity: many } })]))).toHaveLength(1);
  });

  it("drops a __proto__ tag key without touching any prototype", () => {
    const raw = JSON.stringify(nested([outcome()])).replace(
      '"attributes":{"outcome-id"',
      '"attributes":{"tags":{"__proto__":[{"label":"x"}],"Owner":[{"label":"y"}]},"outcome-id"',
    );
    const tags = CallbackSchema.parse(JSON.parse(raw)).outcomes[0]?.tags;
    expect(Object.keys(tags ?? {})).toEqual(["Owner"]);
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
  });

  it("limits message to 1000 characters and urls to 500", () => {
    expect(pathsOf(nested([], { message: "m".repeat(1000) }))).toEqual([]);
    expect(pathsOf(nested([], { message: "m".repeat(1001) }))).toEqual(["data/attributes/message"]);
    expect(pathsOf(nested([], { url: `https://x.example/${"u".repeat(500)}` }))).toEqual(["data/attributes/url"]);
    expect(pathsOf(nested([outcome({ url: "u".repeat(501) })]))).toEqual([
      "data/relationships/outcomes/data/0/attributes/url",
    ]);
  });

  it("limits an outcome body to 1 MiB of UTF-8, not of characters", () => {
    const mib = 1024 * 1024;
    expect(pathsOf(nested([outcome({ body: "a".repeat(mib) })]))).toEqual([]);
    expect(pathsOf(nested([outcome({ body: "a".repeat(mib + 1) })]))).toHaveLength(1);
    // 400 Ki three-byte characters: under the limit in characters, over it in bytes.
    expect(pathsOf(nested([outcome({ body: "€".repeat(400 * 1024) })]))).toEqual([
      "data/relationships/outcomes/data/0/attributes/body",
    ]);
  });
});
