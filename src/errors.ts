import { isStorageBusyError, isStorageUnavailableError, type StorageUnavailableError } from "./storage/unavailable.js";

/**
 * The one error class and the one code table (decision D5). Every non-2xx response is built from
 * an ApiError; a storage that cannot be reached becomes a 503 (D28); anything else that escapes a
 * route becomes a logged 500 with no internals.
 */
export const ERROR_CODES = [
  "bad-request",
  "unauthorized",
  "not-found",
  "method-not-allowed",
  "conflict",
  "payload-too-large",
  "misdirected",
  "unsupported-media-type",
  "invalid-attribute",
  "too-many-requests",
  "internal",
  "unavailable",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const STATUS_BY_CODE = {
  "bad-request": 400,
  unauthorized: 401,
  "not-found": 404,
  "method-not-allowed": 405,
  conflict: 409,
  "payload-too-large": 413,
  misdirected: 421,
  "unsupported-media-type": 415,
  "invalid-attribute": 422,
  "too-many-requests": 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

/** Lower-case titles as the real API writes them (D5). */
export const TITLE_BY_CODE = {
  "bad-request": "bad request",
  unauthorized: "unauthorized",
  "not-found": "not found",
  "method-not-allowed": "method not allowed",
  conflict: "conflict",
  "payload-too-large": "payload too large",
  misdirected: "misdirected request",
  "unsupported-media-type": "unsupported media type",
  "invalid-attribute": "invalid attribute",
  "too-many-requests": "too many requests",
  internal: "internal server error",
  unavailable: "service unavailable",
} as const satisfies Record<ErrorCode, string>;

/**
 * decision D5: the most characters of a request's value (an include, a sort, an id, a key) an error
 * detail quotes: a client sending a megabyte gets a hundred characters back, not the megabyte.
 */
export const QUOTE_LIMIT = 100;
/** decision D5: the longest detail or pointer any error carries, a backstop for a value quoted whole. */
export const MAX_DETAIL_LENGTH = 1_000;


/** decision D5: what an error detail writes of a value the request sent: at most QUOTE_LIMIT characters. */
/**
 * `value` cut to at most `limit` UTF-16 units with an ellipsis after the cut, never splitting a
 * surrogate pair: half of a character is text no JSON parser that checks Unicode reads back (and
 * runplane itself refuses in a request body). Values within the limit are returned as they are.
 */
export function cutText(value: string, limit: number): string {
  if (value.length <= limit) return value;
  const code = value.charCodeAt(limit - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
  return `${value.slice(0, end)}…`;
}

export const quote = (value: string): string => cutText(value, QUOTE_LIMIT);

const bounded = (item: ApiErrorItem): ApiErrorItem => ({
  ...item,
  ...(item.detail !== undefined ? { detail: cutText(item.detail, MAX_DETAIL_LENGTH) } : {}),
  ...(item.pointer !== undefined ? { pointer: cutText(item.pointer, MAX_DETAIL_LENGTH) } : {}),
});

export interface ApiErrorItem {
  detail?: string;
  /** JSON pointer into the request document, e.g. `/data/attributes/key`. */
  pointer?: string;
  /** Name of the offending query parameter, e.g. `page[size]`. */
  parameter?: string;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly items: readonly ApiErrorItem[];
  /** Response headers the answer carries (decision D33: a 429's `Retry-After` and `X-RateLimit-*`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, items: ApiErrorItem | readonly ApiErrorItem[] = {}, headers: Record<string, string> = {}) {
    const list = (Array.isArray(items) ? (items as readonly ApiErrorItem[]) : [items as ApiErrorItem]).map(bounded);
    super(list[0]?.detail ?? TITLE_BY_CODE[code]);
    this.code = code;
    this.status = STATUS_BY_CODE[code];
    this.items = list.length > 0 ? list : [{}];
    this.headers = headers;
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError || (value instanceof Error && value.name === "ApiError" && "code" in value);
}

/** Shorthands for the codes the services raise most. */
export const notFound = (): ApiError => new ApiError("not-found");
export const invalid = (pointer: string, detail: string): ApiError =>
  new ApiError("invalid-attribute", { pointer, detail });
export const conflict = (detail: string): ApiError => new ApiError("conflict", { detail });
export const badRequest = (detail: string, parameter?: string): ApiError =>
  new ApiError("bad-request", parameter === undefined ? { detail } : { detail, parameter });

/** decision D33: 429 with `Retry-After` (whole seconds, at least 1) and any other headers given. */
export const tooManyRequests = (detail: string, waitMs: number, headers: Record<string, string> = {}): ApiError =>
  new ApiError("too-many-requests", { detail }, { ...headers, "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) });

/** decision D28: seconds a client waits before sending a request again after a 503 (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 2;

/**
 * What a 503 says of the storage (found from outside: a table lock read "cannot be reached"): busy
 * when the database answered but a lock or load held the request past its bound, "did not answer
 * in time" when the bound ran out with no word either way, else unreachable.
 */
function unavailableWords(error: StorageUnavailableError): string {
  if (isStorageBusyError(error)) return "The storage is busy right now (a lock or load held this request past its time bound)";
  if (error.code === "ETIMEDOUT") return "The storage did not answer in time";
  return "The storage cannot be reached right now";
}

/**
 * Turns anything thrown into an ApiError: a storage that cannot be reached is 503 (D28), and
 * unknown errors a bare 500. Neither says more than its title (never a host, a statement or a stack).
 */
export function toApiError(value: unknown): ApiError {
  if (isApiError(value)) return value;
  if (isStorageUnavailableError(value)) return new ApiError("unavailable", { detail: `${unavailableWords(value)}; retry in ${RETRY_AFTER_SECONDS} seconds` });
  return new ApiError("internal");
}
