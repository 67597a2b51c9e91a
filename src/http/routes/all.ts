import type { Route } from "../types.js";
import { agentTokenRoutes } from "./agent-tokens.js";
import { agentRoutes } from "./agents.js";
import { artifactRoutes } from "./artifacts.js";
import { auditTrailRoutes } from "./audit-trail.js";
import { commentRoutes } from "./comments.js";
import { configurationVersionRoutes } from "./configuration-versions.js";
import { deliveryAttemptRoutes } from "./delivery-attempts.js";
import { pingRoutes } from "./ping.js";
import { planRoutes } from "./plans.js";
import { policyCheckRoutes } from "./policy-checks.js";
import { policySetParameterRoutes } from "./policy-set-parameters.js";
import { runEventRoutes } from "./run-events.js";
import { runListRoutes } from "./run-lists.js";
import { runTaskRoutes } from "./run-tasks.js";
import { runRoutes } from "./runs.js";
import { taskStageRoutes } from "./task-stages.js";
import { teamProjectRoutes } from "./team-projects.js";
import { teamTokenRoutes } from "./team-tokens.js";
import { variableRoutes } from "./variables.js";

/** Every route of the API, in the order the router tries them (the OpenAPI table and the tests read this one list). */
export const API_ROUTES: readonly Route[] = [
  ...pingRoutes,
  ...teamProjectRoutes,
  ...variableRoutes,
  ...policySetParameterRoutes,
  ...agentTokenRoutes,
  ...agentRoutes,
  ...teamTokenRoutes,
  ...runTaskRoutes,
  ...taskStageRoutes,
  ...deliveryAttemptRoutes,
  ...artifactRoutes,
  ...runRoutes,
  ...runListRoutes,
  ...configurationVersionRoutes,
  ...planRoutes,
  ...runEventRoutes,
  ...commentRoutes,
  ...policyCheckRoutes,
  ...auditTrailRoutes,
];
