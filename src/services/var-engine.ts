import { randomHex } from "../crypto/random.js";
import { maskedValue } from "../domain/masking.js";
import { checkSensitivePatch, type VariablePatch } from "../domain/variable-rules.js";
import { ApiError, invalid, notFound } from "../errors.js";
import type { VarCategory } from "../schemas/common.js";
import type { Page, PageRequest, VariableRecord, VarOwner } from "../schemas/records.js";
import type { ResolvedVariable, VariableView } from "../schemas/variables.js";
import { isoNow, type ServiceContext } from "./context.js";
import { sealedBinding } from "./sealing.js";
import { audited, changesOf } from "./audit.js";
import { currentAuditRequest } from "./audit-request.js";

/** Attributes of a new variable after validation and defaults. */
export interface VariableDraft {
  key: string;
  value: string;
  description: string | null;
  category: VarCategory;
  hcl: boolean;
  sensitive: boolean;
}

const ATTRIBUTES = "/data/attributes";
/** decision D53: the fields an audit event names; `value` only as "value changed" when sensitive before or after. */
const AUDITED_FIELDS = ["key", "value", "description", "category", "hcl", "sensitive"] as const;
const resourceType = (owner: VarOwner): string => (owner.kind === "workspace" ? "var" : "policy-set-parameter");
const secretFields = (...rows: (VariableRecord | null)[]): string[] => (rows.some((r) => r?.sensitive) ? ["value"] : []);
const DUPLICATE_KEY = (): ApiError => invalid(`${ATTRIBUTES}/key`, "Key has already been taken");
/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 8;

/** The associated data a sensitive variable's or parameter's value is sealed with (D11). */
export const variableBinding = (id: string): string => sealedBinding("vars.value", id);

/** The view of a stored variable: a sensitive one's value masked (D10). */
const toView = (r: VariableRecord): VariableView => ({
  id: r.id,
  ownerId: r.ownerId,
  key: r.key,
  // A sensitive row is never opened for a response: masking needs no plaintext.
  value: r.sensitive ? maskedValue(r, "") : r.value,
  description: r.description,
  category: r.category,
  hcl: r.hcl,
  sensitive: r.sensitive,
  versionId: r.versionId,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/** `current` with what `patch` names (absent attributes kept), its sealed `value` and a new version id (D12). */
function patched(current: VariableRecord, patch: VariablePatch, value: string, sensitive: boolean, now: string): VariableRecord {
  return {
    ...current,
    key: patch.key ?? current.key,
    value,
    description: patch.description === undefined ? current.description : patch.description,
    category: patch.category ?? current.category,
    hcl: patch.hcl ?? current.hcl,
    sensitive,
    // decision D12: version-id changes on every update, even an empty one.
    versionId: randomHex(20),
    updatedAt: now,
  };
}

/** decision D53: a variable write with its audit event, recorded in the write's transaction. */
function createVarRecorder(ctx: ServiceContext) {
  // The request's principal acts within its own organization (D5a); outside a request, the owner says.
  const organizationOf = async (owner: VarOwner): Promise<string> => {
    const known = currentAuditRequest()?.organization;
    if (known !== undefined) return known;
    const found = owner.kind === "workspace" ? await ctx.storage.workspaces.get(owner.id) : await ctx.storage.policySets.get(owner.id);
    return found?.organization ?? "";
  };
  return async <R>(owner: VarOwner, id: string, action: string, before: VariableRecord | null, after: VariableRecord | null, write: () => Promise<R>) =>
    audited(ctx, { organization: await organizationOf(owner), resource: { type: resourceType(owner), id }, action, changes: changesOf(before, after, AUDITED_FIELDS, secretFields(before, after)) }, write);
}

/**
 * The shared engine behind workspace variables and policy set parameters (both are `vars`): sealing
 * of sensitive values (D11), masking (D10), uniqueness (D12) and compare-and-set updates.
 */
export function createVarEngine(ctx: ServiceContext) {
  const binding = variableBinding;
  const plaintextOf = (r: VariableRecord): string => (r.sensitive ? ctx.keyring.open(r.value, binding(r.id)) : r.value);
  const stored = (id: string, plaintext: string, sensitive: boolean): string =>
    sensitive ? ctx.keyring.seal(plaintext, binding(id)) : plaintext;
  const recorded = createVarRecorder(ctx);


  return {
    toView,

    async list(owner: VarOwner, page?: PageRequest): Promise<Page<VariableView>> {
      const result = await ctx.storage.variables.list(owner, page);
      return { items: result.items.map(toView), total: result.total };
    },

    async get(owner: VarOwner, id: string): Promise<VariableView | null> {
      const row = await ctx.storage.variables.get(owner, id);
      return row ? toView(row) : null;
    },

    async create(owner: VarOwner, draft: VariableDraft): Promise<VariableView> {
      const id = ctx.newId("var");
      const now = isoNow(ctx);
      const record: VariableRecord = {
        id,
        ownerKind: owner.kind,
        ownerId: owner.id,
        key: draft.key,
        value: stored(id, draft.value, draft.sensitive),
        description: draft.description,
        category: draft.category,
        hcl: draft.hcl,
        sensitive: draft.sensitive,
        versionId: randomHex(20),
        createdAt: now,
        updatedAt: now,
      };
      const result = await recorded(owner, id, "create", null, record, () => ctx.storage.variables.insert(record));
      if (!result.ok) throw DUPLICATE_KEY();
      return toView(record);
    },

    async update(owner: VarOwner, id: string, patch: VariablePatch): Promise<VariableView> {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await ctx.storage.variables.get(owner, id);
        if (!current) throw notFound();
        if (current.sensitive) await ctx.keys.holdKeysOf([current.value]);
        const decision = checkSensitivePatch(current, patch);
        if (!decision.ok) throw invalid(`${ATTRIBUTES}/${decision.attribute}`, decision.detail);

        const sensitive = patch.sensitive ?? current.sensitive;
        // Keep the sealed string when nothing about the value changes; otherwise (re)seal the plaintext.
        const value =
          patch.value === undefined && sensitive === current.sensitive
            ? current.value
            : stored(id, patch.value ?? plaintextOf(current), sensitive);
        const next = patched(current, patch, value, sensitive, isoNow(ctx));
        const result = await recorded(owner, id, "update", current, next, () => ctx.storage.variables.update(next, current.versionId));
        if (result.ok) return toView(next);
        if (result.reason === "duplicate-key") throw DUPLICATE_KEY();
        if (result.reason === "missing") throw notFound();
      }
      throw new ApiError("conflict", { detail: "The variable is being updated concurrently; retry the request" });
    },

    async delete(owner: VarOwner, id: string): Promise<boolean> {
      // Read first so the event names what went (its key); a row gone meanwhile records nothing.
      const before = await ctx.storage.variables.get(owner, id);
      if (!before) return false;
      return recorded(owner, id, "destroy", before, null, () => ctx.storage.variables.delete(owner, id));
    },

    /** Plaintext of every variable of `owner`: the only way out for sensitive values (D10). */
    async resolve(owner: VarOwner): Promise<ResolvedVariable[]> {
      const { items } = await ctx.storage.variables.list(owner);
      await ctx.keys.holdKeysOf(items.map((r) => (r.sensitive ? r.value : null)));
      return items.map((r) => ({ key: r.key, value: plaintextOf(r), category: r.category, hcl: r.hcl }));
    },
  };
}

export type VarEngine = ReturnType<typeof createVarEngine>;
