import * as z from "zod";
import { MAX_PAGE_NUMBER, MAX_PAGE_SIZE } from "../../http/pagination.js";

/** How the success body of an operation looks; resources are named by their wire type (and variant). */
export type SuccessBody =
  | { resource: string; variant?: string; included?: readonly string[] }
  /** `always`: every answer is paged (D7); `optional`: only when the request names a page; `never`: D7's unpaged lists. */
  | { collection: string; variant?: string; paging: "always" | "optional" | "never"; included?: readonly string[] }
  | { media: string; format: "binary" | "text" | "json" }
  | null;

export interface QueryParam {
  name: string;
  description: string;
  schema: z.ZodType;
  required?: boolean;
}

/** A JSON:API resource body (`data.type`, attributes, relationships) or a whole document schema. */
export type RequestBody =
  | { types: readonly string[]; attributes: z.ZodType; relationships?: z.ZodType; required?: boolean }
  | { document: z.ZodType; required: boolean; plainJson?: boolean };

/** Which credential an operation takes: an API token, a run's callback/access token, either, or none. */
export type Security = "api" | "access-token" | "api-or-access-token" | "none";

/** The documentation of one route, keyed by `METHOD /path` like the permission table (D21). */
export interface OperationDoc {
  tag: string;
  summary: string;
  description?: string;
  security?: Security;
  query?: readonly QueryParam[];
  body?: RequestBody;
  /** `headers`: what the success carries beyond the `X-RateLimit-*` every answer has with the rate limit on (D33). */
  success: { status: 200 | 201 | 202 | 204; body: SuccessBody; headers?: Record<string, { description: string; schema: object }> };
  /** Error statuses beyond the common ones (401 with a credential, 404, 500; 400/413/415/422 with a body). */
  errors?: readonly number[];
  /** Common statuses the operation never answers: the callback's 404 (D17a: 401 for an unknown result too). */
  never?: readonly number[];
}

/** decisions D7, D26: the page parameters every paged list takes. */
export const PAGE_PARAMS: readonly QueryParam[] = [
  { name: "page[number]", description: "page number, from 1 (D7)", schema: z.int().min(1).max(MAX_PAGE_NUMBER) },
  { name: "page[size]", description: "items per page, default 20 (D7)", schema: z.int().min(1).max(MAX_PAGE_SIZE) },
];

/** decision D8: the include names a route accepts (both spellings), comma-separated. */
export const includeParam = (names: readonly string[]): QueryParam => ({
  name: "include",
  description: `comma-separated related resources to include: ${names.join(", ")}; anything else is 400 (D8)`,
  schema: z.string(),
});
