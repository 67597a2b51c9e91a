import * as z from "zod";
import type { Dialect } from "./common.js";

/** decision D12 limits. Value size is counted in UTF-8 bytes. */
export const VARIABLE_LIMITS = { key: 128, valueBytes: 256 * 1024, description: 512 } as const;

const valueBytes = (v: string): boolean => Buffer.byteLength(v, "utf8") <= VARIABLE_LIMITS.valueBytes;

export const VariableKeySchema = z.string().trim().min(1).max(VARIABLE_LIMITS.key);
/** `null` is stored as "" (D12; the real API does the same). */
export const VariableValueSchema = z
  .string()
  .refine(valueBytes, { message: `is too long (maximum is ${VARIABLE_LIMITS.valueBytes} bytes)` })
  .nullable()
  .transform((v) => v ?? "");
export const VariableDescriptionSchema = z.string().max(VARIABLE_LIMITS.description).nullable();

/** The dialect's own category words: the only ones an error lists, so hcp-terraform never shows `config` (D1). */
export const CATEGORY_WORDS = {
  default: ["config", "env"],
  "hcp-terraform": ["terraform", "env"],
} as const satisfies Record<Dialect, readonly string[]>;

const INPUT_CATEGORY_WORDS = ["config", "terraform", "env"] as const;
const isCategoryWord = (c: string): c is (typeof INPUT_CATEGORY_WORDS)[number] => (INPUT_CATEGORY_WORDS as readonly string[]).includes(c);

/**
 * Category words accepted on input in both dialects (D1); `terraform` is stored as `config`. A
 * refined string rather than an enum, so the error lists only the dialect's own words; the `enum`
 * metadata lets the OpenAPI description list every accepted word.
 */
export const workspaceCategoryInputSchema = (dialect: Dialect) =>
  z
    .string()
    .refine(isCategoryWord, `must be one of: ${CATEGORY_WORDS[dialect].join(", ")}`)
    .meta({ enum: [...INPUT_CATEGORY_WORDS] })
    .transform((c) => (c === "terraform" ? "config" : (c as "config" | "env")));
export const WorkspaceCategoryInputSchema = workspaceCategoryInputSchema("default");
export const PolicySetCategoryInputSchema = z.literal("policy-set");

export const WorkspaceVariableCreateSchema = z.object({
  key: VariableKeySchema,
  value: VariableValueSchema.optional().transform((v) => v ?? ""),
  description: VariableDescriptionSchema.optional().transform((v) => v ?? null),
  category: WorkspaceCategoryInputSchema,
  hcl: z.boolean().optional().default(false),
  sensitive: z.boolean().optional().default(false),
});
export type WorkspaceVariableCreate = z.input<typeof WorkspaceVariableCreateSchema>;

export const WorkspaceVariableUpdateSchema = z.object({
  key: VariableKeySchema.optional(),
  value: VariableValueSchema.optional(),
  description: VariableDescriptionSchema.optional(),
  category: WorkspaceCategoryInputSchema.optional(),
  hcl: z.boolean().optional(),
  sensitive: z.boolean().optional(),
});
export type WorkspaceVariableUpdate = z.input<typeof WorkspaceVariableUpdateSchema>;

/** Create and update schemas whose category error speaks the dialect's words (D1). */
export const workspaceVariableSchemas = (dialect: Dialect) => ({
  create: WorkspaceVariableCreateSchema.extend({ category: workspaceCategoryInputSchema(dialect) }),
  update: WorkspaceVariableUpdateSchema.extend({ category: workspaceCategoryInputSchema(dialect).optional() }),
});

export const PolicySetParameterCreateSchema = z.object({
  key: VariableKeySchema,
  value: VariableValueSchema.optional().transform((v) => v ?? ""),
  category: PolicySetCategoryInputSchema,
  sensitive: z.boolean().optional().default(false),
});
export type PolicySetParameterCreate = z.input<typeof PolicySetParameterCreateSchema>;

export const PolicySetParameterUpdateSchema = z.object({
  key: VariableKeySchema.optional(),
  value: VariableValueSchema.optional(),
  category: PolicySetCategoryInputSchema.optional(),
  sensitive: z.boolean().optional(),
});
export type PolicySetParameterUpdate = z.input<typeof PolicySetParameterUpdateSchema>;

/** A variable as the API shows it: `value` already masked (D10). */
export interface VariableView {
  id: string;
  ownerId: string;
  key: string;
  value: string | null;
  description: string | null;
  category: "config" | "env" | "policy-set";
  hcl: boolean;
  sensitive: boolean;
  versionId: string;
  createdAt: string;
  updatedAt: string;
}

/** Plaintext for the host's run (workspace variables) or policy evaluation (parameters). */
export interface ResolvedVariable {
  key: string;
  value: string;
  category: "config" | "env" | "policy-set";
  hcl: boolean;
}
