import type { ArtifactProviders, ArtifactRun } from "../../src/index.js";
import { tarGz } from "./tarball.js";

/**
 * The reference server's artifacts (decision D24): what integrations download from
 * `plan_json_api_url` and `configuration_version_download_url`. A real host returns its own plan
 * (`terraform show -json`) and configuration archive; the demo derives both from the run, so a run
 * whose message contains "destroy" plans to delete a resource and the example integration has
 * something to refuse.
 */

const MAIN_TF = `resource "null_resource" "demo" {
  triggers = { message = var.message }
}

resource "null_resource" "legacy" {}

variable "message" {
  type    = string
  default = "hello"
}
`;

const README = "Demo configuration of the runplane reference server.\n";

type Action = "no-op" | "create" | "read" | "update" | "delete";

const change = (address: string, type: string, name: string, actions: Action[], after: Record<string, unknown> | null) => ({
  address,
  mode: "managed",
  type,
  name,
  provider_name: "registry.terraform.io/hashicorp/null",
  change: { actions, before: actions.includes("create") ? null : {}, after, after_unknown: {}, before_sensitive: false, after_sensitive: false },
});

/** A plan in the shape `terraform show -json` writes (format 1.2): planned values and resource changes. */
export function demoPlanJson(run: ArtifactRun): Record<string, unknown> {
  const destroy = run.message.toLowerCase().includes("destroy");
  const demo = { address: "null_resource.demo", mode: "managed", type: "null_resource", name: "demo", values: { triggers: { message: run.message } } };
  const legacy = { address: "null_resource.legacy", mode: "managed", type: "null_resource", name: "legacy", values: { triggers: null } };
  return {
    format_version: "1.2",
    terraform_version: "1.9.8",
    planned_values: { root_module: { resources: destroy ? [demo] : [demo, legacy] } },
    resource_changes: [
      change("null_resource.demo", "null_resource", "demo", ["create"], demo.values),
      change("null_resource.legacy", "null_resource", "legacy", destroy ? ["delete"] : ["no-op"], destroy ? null : legacy.values),
    ],
    configuration: { root_module: { resources: [{ address: "null_resource.demo" }, { address: "null_resource.legacy" }] } },
    timestamp: run.createdAt,
    applyable: true,
    complete: true,
    errored: false,
  };
}

/** The demo configuration version as a `.tar.gz` (built in code, not committed as a binary). */
export function demoConfiguration(run: ArtifactRun): Uint8Array {
  const mtime = Math.floor(Date.parse(run.createdAt) / 1000);
  return tarGz([{ name: "main.tf", content: MAIN_TF }, { name: "README.md", content: README }], mtime);
}

export const demoArtifacts: ArtifactProviders = { planJson: demoPlanJson, configurationVersion: demoConfiguration };
