import * as z from "zod";
import { KEY_ID, keyProblem } from "./crypto/keyring.js";
import { DIALECTS } from "./schemas/common.js";

/**
 * `createRunplane` options checked once, up front (issue 17.4): a wrong option fails at startup with
 * one error that names it, says what was given and how to fix it, instead of a TypeError from deep
 * inside the first request. The schema is loose: options it does not list (and every TypeScript-only
 * shape, such as a logger's methods) are left to the code that reads them.
 */
export class RunplaneOptionsError extends TypeError {
  override readonly name = "RunplaneOptionsError";
  /** The option at fault, dotted (`keyring.keys.0.key`). */
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

const KEYGEN = "make a key with `npx runplane keygen` or `generateKey()` from \"runplane\"";

/** How to fix each option, by its top-level name. */
const FIXES: Record<string, string> = {
  storage: 'pass a storage adapter, e.g. `createMemoryStorage()` from "runplane/adapters/memory" or `createSqliteStorage(db)` from "runplane/adapters/sqlite"',
  basePath: 'use a fixed path such as "/api/v2"; runplane matches its own routes below it, so it takes no ":param" or "*" segments',
  dialect: `use one of ${DIALECTS.map((d) => JSON.stringify(d)).join(", ")} ("hcp-terraform" for real Terraform clients and agents)`,
  keyring: `pass { keys: [{ id: "k1", key: "<32 bytes, base64>" }] } or a Keyring from createKeyring(); ${KEYGEN}`,
  readCache: "pass false, or { maxBytes: <positive integer> }",
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isFunction = (v: unknown) => typeof v === "function";

// A storage is recognised by two of its stores and `close`, enough to catch a missing or wrong value.
const isStorage = (v: unknown) => isRecord(v) && isRecord(v.projects) && isRecord(v.variables) && isFunction(v.close);

function checkKeyring(value: unknown, ctx: z.RefinementCtx): void {
  if (value === undefined || (isRecord(value) && isFunction(value.seal) && isFunction(value.open))) return;
  if (!isRecord(value) || !Array.isArray(value.keys)) {
    ctx.addIssue({ code: "custom", message: "must be a Keyring or { keys: [{ id, key }], active? }" });
    return;
  }
  if (value.keys.length === 0) ctx.addIssue({ code: "custom", path: ["keys"], message: "needs at least one key" });
  value.keys.forEach((entry: unknown, i) => {
    const id: unknown = isRecord(entry) ? entry.id : undefined;
    if (!KEY_ID.safeParse(id).success) ctx.addIssue({ code: "custom", path: ["keys", i, "id"], message: "must be 1-64 of [A-Za-z0-9_-]" });
    const problem = keyProblem(isRecord(entry) ? entry.key : undefined);
    // The key is a secret: keyProblem describes it without echoing it.
    if (problem) ctx.addIssue({ code: "custom", path: ["keys", i, "key"], message: `(id ${JSON.stringify(id)}) ${problem}` });
  });
}

const OptionsSchema = z.looseObject({
  storage: z.custom(isStorage, { error: (iss) => (iss.input === undefined ? "is required" : "must be a storage adapter") }),
  basePath: z
    .string({ error: "must be a string" })
    .refine((p) => p === "" || p.startsWith("/"), "must start with /")
    .refine((p) => !/[:*?(){}]/.test(p), "must be a fixed path, without parameters or wildcards")
    .optional(),
  dialect: z.enum(DIALECTS, { error: "is not a known dialect" }).optional(),
  keyring: z.unknown().superRefine(checkKeyring).optional(),
  readCache: z.union([z.literal(false), z.object({ maxBytes: z.number().int().positive().optional() })], { error: "is not valid" }).optional(),
  authenticate: z.custom(isFunction, { error: "must be a function" }).optional(),
  clock: z.custom(isFunction, { error: "must be a function" }).optional(),
  logger: z.custom((v) => isRecord(v) && isFunction(v.warn) && isFunction(v.error), { error: "must be a Logger" }).optional(),
});

/** A short, secret-free description of what was given. */
function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (isRecord(value)) return `an object with ${Object.keys(value).slice(0, 6).join(", ") || "no keys"}`;
  return String(value);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((v, key) => (isRecord(v) ? v[key as string] : undefined), root);
}

/** Throws a {@link RunplaneOptionsError} for the first wrong option; returns when all hold. */
export function checkOptions(options: unknown): void {
  if (!isRecord(options)) throw new RunplaneOptionsError("", `createRunplane needs an options object; got ${describe(options)}. Pass at least { storage }.`);
  const result = OptionsSchema.safeParse(options);
  if (result.success) return;
  const issue = result.error.issues[0]!;
  const top = String(issue.path[0] ?? "");
  const option = issue.path.map(String).join(".");
  // Keyring issues describe the key themselves; everything else shows the value given.
  const given = top === "keyring" ? "" : `; got ${describe(valueAt(options, issue.path))}`;
  const fix = FIXES[top] ?? `see the Options table of the README`;
  throw new RunplaneOptionsError(option, `createRunplane: option \`${option}\` ${issue.message}${given}. Fix: ${fix}.`);
}
