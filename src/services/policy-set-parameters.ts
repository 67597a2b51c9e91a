import { notFound } from "../errors.js";
import type { Page, PageRequest } from "../schemas/records.js";
import {
  PolicySetParameterCreateSchema,
  PolicySetParameterUpdateSchema,
  type PolicySetParameterCreate,
  type PolicySetParameterUpdate,
  type VariableView,
} from "../schemas/variables.js";
import type { ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";
import type { VarEngine } from "./var-engine.js";

const ATTRIBUTES = "/data/attributes";
const ownerOf = (policySetId: string) => ({ kind: "policy-set", id: policySetId }) as const;

/** Policy set parameters (spec 2.4, 4.4; D10-D12): `vars` of category `policy-set`. */
export function createPolicySetParameterService(ctx: ServiceContext, engine: VarEngine) {
  const requirePolicySet = async (policySetId: string) => {
    const policySet = await ctx.storage.policySets.get(policySetId);
    if (!policySet) throw notFound();
    return policySet;
  };

  return {
    async list(policySetId: string, page?: PageRequest): Promise<Page<VariableView>> {
      await requirePolicySet(policySetId);
      return engine.list(ownerOf(policySetId), page);
    },
    async get(policySetId: string, parameterId: string): Promise<VariableView> {
      const view = await engine.get(ownerOf(policySetId), parameterId);
      if (!view) throw notFound();
      return view;
    },
    async create(policySetId: string, input: PolicySetParameterCreate): Promise<VariableView> {
      await requirePolicySet(policySetId);
      const draft = parseOrThrow(PolicySetParameterCreateSchema, input, ATTRIBUTES);
      return engine.create(ownerOf(policySetId), { ...draft, description: null, hcl: false });
    },
    async update(policySetId: string, parameterId: string, patch: PolicySetParameterUpdate): Promise<VariableView> {
      return engine.update(ownerOf(policySetId), parameterId, parseOrThrow(PolicySetParameterUpdateSchema, patch, ATTRIBUTES));
    },
    async delete(policySetId: string, parameterId: string): Promise<void> {
      if (!(await engine.delete(ownerOf(policySetId), parameterId))) throw notFound();
    },
    /** Plaintext key/value pairs for the policy runtime (D10). */
    async resolveForEvaluation(policySetId: string): Promise<{ key: string; value: string }[]> {
      await requirePolicySet(policySetId);
      return (await engine.resolve(ownerOf(policySetId))).map(({ key, value }) => ({ key, value }));
    },
  };
}
export type PolicySetParameterService = ReturnType<typeof createPolicySetParameterService>;
