/**
 * A small deterministic `terraform show -json` plan (one create, one update, one delete) served by
 * the simulator at `plan_json_api_url`, like the reference server's demo plan, with no clock or
 * randomness so reports are reproducible.
 */
export const SIMULATED_PLAN = {
  format_version: "1.2",
  terraform_version: "1.9.0",
  resource_changes: [
    { address: "null_resource.created", type: "null_resource", name: "created", change: { actions: ["create"], before: null, after: {} } },
    { address: "null_resource.updated", type: "null_resource", name: "updated", change: { actions: ["update"], before: {}, after: {} } },
    { address: "null_resource.deleted", type: "null_resource", name: "deleted", change: { actions: ["delete"], before: {}, after: null } },
  ],
} as const;
