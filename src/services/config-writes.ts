import { ApiError } from "../errors.js";

/** Where the run task configuration's attribute errors point. */
export const ATTRIBUTES = "/data/attributes";
/** Compare-and-set retries of a configuration update before it answers 409. */
export const MAX_ATTEMPTS = 8;
export const BUSY = (): ApiError => new ApiError("conflict", { detail: "The resource is being updated concurrently; retry the request" });
