/** The HTTP transport delivery code depends on (decision D15); `createEgress` makes the guarded one. */

export interface HttpRequest {
  url: string;
  method?: "POST";
  headers: Record<string, string>;
  body: Uint8Array | string;
  /**
   * Abandons the attempt (an `aborted` EgressError), e.g. when a dispatcher stops. A dispatcher
   * gives all its attempts one signal: a transport that listens on it removes its listener when
   * the request ends.
   */
  signal?: AbortSignal;
  /**
   * decision D34: the agent pool whose agent sends this request (the agent transport's routing);
   * the platform's own egress refuses a request that names one.
   */
  agentPoolId?: string;
  /**
   * decision D58: the agent transport calls it with the agent chosen, before the agent gets the
   * request (the attempt's record is written then); other transports ignore it.
   */
  handing?: (agent: { id: string; name: string | null }) => Promise<void>;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** UTF-8 decoded, at most `maxBodyBytes` bytes of the body. */
  body: string;
  bodyTruncated: boolean;
  /**
   * decision D38: the answer had a body, but the destination is not a public address and only the
   * allowlist admitted it, so the egress kept none of it (its `excerpts` is `"status"`, the
   * default): `body` is empty and only the status may be shown.
   */
  bodyWithheld?: boolean;
  /** decision D34: the agent that sent the request and reported this answer; absent when sent directly. */
  agentId?: string;
}

/** What delivery code depends on; hosts and tests may inject their own. Errors are EgressErrors. */
export interface HttpTransport {
  send(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

export type ResolvedAddress = { address: string; family: number };
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;
