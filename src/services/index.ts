import { createAgentTokenService } from "./agent-tokens.js";
import { createAuditTrail } from "./audit-trail.js";
import { createAgentService } from "./agents.js";
import { createCommentService } from "./comments.js";
import type { ServiceContext } from "./context.js";
import { createDirectory } from "./directory.js";
import { createLogCapabilities } from "./log-capabilities.js";
import { createPolicySetParameterService } from "./policy-set-parameters.js";
import { createRunTaskService } from "./run-tasks.js";
import { createTeamProjectService } from "./team-projects.js";
import { createVarEngine } from "./var-engine.js";
import { createVariableService, createVariableWriter } from "./variables.js";

/** Every service of one runplane instance, built over one context. */
export function createServices(ctx: ServiceContext) {
  const varEngine = createVarEngine(ctx);
  return {
    context: ctx,
    directory: createDirectory(ctx),
    variables: createVariableService(ctx, varEngine),
    /** For the HTTP route, which has read and authorized the workspace already. */
    variableWriter: createVariableWriter(ctx, varEngine),
    policySetParameters: createPolicySetParameterService(ctx, varEngine),
    teamProjects: createTeamProjectService(ctx),
    agentTokens: createAgentTokenService(ctx),
    /** decision D34: the agents of agent pools. */
    agents: createAgentService(ctx),
    runTasks: createRunTaskService(ctx),
    comments: createCommentService(ctx),
    /** decision D32: the capabilities `log-read-url` carries. */
    logs: createLogCapabilities(ctx),
    varEngine,
    /** decision D53: the audit trail (`list`, `on("audit")`, `verify`, `prune`). */
    audit: createAuditTrail(ctx),
  };
}
export type Services = ReturnType<typeof createServices>;
