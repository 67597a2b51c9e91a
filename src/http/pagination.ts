import { ApiError } from "../errors.js";
import type { PageRequest } from "../schemas/records.js";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;
/** decision D26: the highest `page[number]` any list accepts. */
export const MAX_PAGE_NUMBER = 1_000_000;

/** The two page parameters (D7), in the order they are documented. */
export const PAGE_PARAMETERS: readonly string[] = ["page[number]", "page[size]"];

export interface PageParams {
  number: number;
  size: number;
}

const invalidParam = (parameter: string, detail: string): ApiError =>
  new ApiError("invalid-attribute", { parameter, detail });

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw invalidParam(name, `${name} must be an integer`);
  return Number(raw);
}

/**
 * decisions D7, D26: `page[number]` default 1 and 1..1,000,000, `page[size]` default 20 and 1..100;
 * anything else is 422.
 * `optional` lists (policy set parameters) resolve null when neither parameter is present.
 */
export function parsePage(query: URLSearchParams, options: { optional?: boolean } = {}): PageParams | null {
  const number = integerParam(query, "page[number]");
  const size = integerParam(query, "page[size]");
  if (options.optional && number === undefined && size === undefined) return null;
  if (size !== undefined && (size < 1 || size > MAX_PAGE_SIZE)) {
    throw invalidParam("page[size]", `page[size] must be between 1 and ${MAX_PAGE_SIZE}`);
  }
  if (number !== undefined && (number < 1 || number > MAX_PAGE_NUMBER)) {
    throw invalidParam("page[number]", `page[number] must be between 1 and ${MAX_PAGE_NUMBER}`);
  }
  return { number: number ?? 1, size: size ?? DEFAULT_PAGE_SIZE };
}

export const toPageRequest = (page: PageParams): PageRequest => ({ offset: (page.number - 1) * page.size, limit: page.size });
