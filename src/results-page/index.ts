export { createResultsPage, CONTENT_SECURITY_POLICY, type ResultsPageOptions } from "./handler.js";
export { COOKIE_NAME } from "./login.js";
export type { ResultsPageSource, RunTarget } from "./types.js";
