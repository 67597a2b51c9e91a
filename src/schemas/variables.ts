import * as z from "zod";

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

/** Category words accepted on input in both dialects (D1); `terraform` is stored as `config`. */
export const WorkspaceCategoryInputSchema = z
  .enum(["config", "terraform", "env"])
  .transform((c) => (c === "terraform" ? "config" : c));
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
