import type { VarCategory } from "../schemas/common.js";

/** The attributes a client may send on update; `undefined` means "leave unchanged". */
export interface VariablePatch {
  key?: string | undefined;
  value?: string | undefined;
  description?: string | null | undefined;
  category?: VarCategory | undefined;
  hcl?: boolean | undefined;
  sensitive?: boolean | undefined;
}

export interface VariableState {
  key: string;
  description: string | null;
  category: VarCategory;
  hcl: boolean;
  sensitive: boolean;
}

export type PatchDecision =
  | { ok: true }
  | { ok: false; attribute: "key" | "category" | "hcl" | "sensitive"; detail: string };

const LABEL = { key: "Key", category: "Category", hcl: "HCL" } as const;

/**
 * decision D10: on a sensitive variable only `value` and `description` may change; turning
 * `sensitive` off is refused (the value could never be shown again), turning it on is allowed.
 */
export function checkSensitivePatch(current: VariableState, patch: VariablePatch): PatchDecision {
  if (!current.sensitive) return { ok: true };
  if (patch.sensitive === false) {
    return {
      ok: false,
      attribute: "sensitive",
      detail:
        "Sensitive cannot be changed from true to false on saved records. To make this variable readable, destroy this record and create a new one with the same key value.",
    };
  }
  for (const attribute of ["key", "category", "hcl"] as const) {
    const next = patch[attribute];
    if (next !== undefined && next !== current[attribute]) {
      return { ok: false, attribute, detail: `${LABEL[attribute]} cannot be updated for a sensitive variable` };
    }
  }
  return { ok: true };
}
