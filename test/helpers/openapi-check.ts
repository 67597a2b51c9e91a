import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { OpenApiDocument, Runplane } from "../../src/index.js";

/**
 * Checks every response the HTTP suites receive against the OpenAPI document of the runplane that
 * answered it: the status must be documented for the operation, the content type must be
 * the documented one, and the body must match the documented schema. A mismatch throws, failing
 * the test that made the request.
 */

// ajv-formats is CommonJS; under ESM its function is the default export's default.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}
interface PathEntry {
  segments: string[];
  operations: Record<string, Operation>;
}

const ROOT = "runplane-openapi";
const mediaOf = (contentType: string | null): string => (contentType ?? "").split(";")[0]!.trim().toLowerCase();

export function createResponseChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: ROOT, components: doc.components }, ROOT);
  const validators = new Map<string, ValidateFunction>();
  const validator = (schema: Record<string, unknown>): ValidateFunction => {
    const key = JSON.stringify(schema);
    let fn = validators.get(key);
    if (!fn) {
      // A `$ref` into the components resolves against the added document; anything else compiles as is.
      fn = typeof schema.$ref === "string" ? ajv.compile({ $ref: `${ROOT}${schema.$ref}` }) : ajv.compile(schema);
      validators.set(key, fn);
    }
    return fn;
  };
  const basePath = ((doc.servers as { url: string }[])[0]!.url).replace(/\/$/, "");
  const entries: PathEntry[] = Object.entries(doc.paths).map(([template, operations]) => ({
    segments: template.split("/").filter(Boolean),
    operations: operations as Record<string, Operation>,
  }));
  const errorDocument = validator({ $ref: "#/components/schemas/ErrorDocument" });

  const find = (pathname: string, method: string): { template: string; op: Operation } | null => {
    const actual = pathname.split("/").filter(Boolean);
    for (const entry of entries) {
      if (entry.segments.length !== actual.length) continue;
      if (!entry.segments.every((s, i) => (s.startsWith("{") ? actual[i] !== "" : s === actual[i]))) continue;
      const op = entry.operations[method];
      if (op) return { template: `/${entry.segments.join("/")}`, op };
    }
    return null;
  };

  const fail = (what: string, detail: string): never => {
    throw new Error(`OpenAPI response check: ${what}: ${detail}`);
  };

  return function check(method: string, url: string, status: number, contentType: string | null, text: string): void {
    const { pathname } = new URL(url);
    const verb = method === "HEAD" ? "get" : method.toLowerCase();
    const inside = pathname === basePath || pathname.startsWith(`${basePath}/`);
    const found = inside ? find(pathname.slice(basePath.length), verb) : null;
    const what = `${method} ${pathname} -> ${status}`;
    if (!found) {
      // No operation (unknown path, 405, outside the base path): only an error document may answer.
      if (status < 400) fail(what, "no documented operation answers with success");
      if (method !== "HEAD" && !errorDocument(JSON.parse(text))) fail(what, ajv.errorsText(errorDocument.errors));
      return;
    }
    const response = found.op.responses[String(status)] ?? fail(what, `status not documented for ${method} ${found.template}`);
    if (method === "HEAD") return;
    if (!response.content) {
      if (text !== "") fail(what, "documented without a body, answered with one");
      return;
    }
    const media = response.content[mediaOf(contentType)] ?? fail(what, `content type ${contentType} not documented (${Object.keys(response.content).join(", ")})`);
    if (!media.schema || Object.keys(media.schema).length === 0 || media.schema.type === "string") return;
    const validate = validator(media.schema);
    if (!validate(JSON.parse(text))) fail(what, ajv.errorsText(validate.errors, { separator: "; " }));
  };
}

/**
 * Wraps `runplane.handler` so every response it gives is checked against `runplane.openapi()`; the
 * suites' own assertions then run on the same response.
 */
export function checkResponsesOf<T extends Pick<Runplane, "handler" | "openapi">>(runplane: T): T {
  const inner = runplane.handler;
  let check: ReturnType<typeof createResponseChecker> | undefined;
  runplane.handler = async (request: Request, connection?: { remoteAddress?: string | null }): Promise<Response> => {
    const response = await inner(request, connection);
    // decision D34: the agent protocol is runplane's own, outside the API the document describes.
    if (new URL(request.url).pathname.startsWith("/api/agent/v1/")) return response;
    check ??= createResponseChecker(runplane.openapi());
    const clone = response.clone();
    const text = request.method === "HEAD" ? "" : await clone.text();
    check(request.method, request.url, response.status, response.headers.get("content-type"), text);
    return response;
  };
  return runplane;
}
