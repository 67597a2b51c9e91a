/**
 * `runplane/agent`: an agent for run tasks bound to an agent pool (decision D34), to embed in a
 * process inside the private network. It imports no storage code.
 */
export { runAgent, type AgentHandle, type AgentOptions } from "./run-agent.js";
export { DEFAULT_AGENT_ALLOW } from "./job.js";
