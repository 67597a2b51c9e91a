import type { Page, PageRequest } from "../../src/schemas/records.js";
import { clone } from "./clone.js";

/** Code-unit order (ids compare exactly, as the contract says), and numbers. */
export const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);
/** The contract's default list order: `createdAt`, then `id`. */
export const byCreation = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  cmp(a.createdAt, b.createdAt) || cmp(a.id, b.id);
/** One page of `all` (every row without `request`), cloned. */
export const page = <T>(all: T[], request?: PageRequest): Page<T> => ({
  items: (request ? all.slice(request.offset, request.offset + request.limit) : all).map(clone),
  total: all.length,
});
