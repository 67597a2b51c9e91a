import type { createSignIn } from "./sign-in.js";
import type { ResultsPageSource } from "./types.js";

/** What every part of the results page works with, resolved once from its options. */
export interface PageParts {
  source: ResultsPageSource;
  prefix: string;
  login: boolean;
  maxOutcomes: number;
  signIn: ReturnType<typeof createSignIn>;
  /** Whether the cookie is marked `Secure` for a request to `url`. */
  secure(url: URL): boolean;
}
