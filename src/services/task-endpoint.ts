/** A run task endpoint about to be saved: where and how its requests will be sent. */
export interface TaskEndpoint {
  organization: string;
  url: string;
  /** The plaintext HMAC key the requests will be signed with, or null. */
  hmacKey: string | null;
}

/**
 * Save-time check of a run task endpoint (decision D15), run before a task is created and before
 * its URL or HMAC key changes: the SSRF policy, then the signed verification request, which must be
 * answered 200. Throws a 422 ApiError at `pointer` otherwise. `createRunplane` wires the one built
 * by `src/delivery/verification.ts` through `ServiceContext.taskEndpointCheck`.
 */
export type TaskEndpointCheck = (endpoint: TaskEndpoint, pointer: string) => Promise<void>;
