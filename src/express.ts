import type { IncomingMessage, ServerResponse } from "node:http";
import { toWebRequest, writeWebResponse, type FetchHandler } from "./node.js";

/** What the middleware needs of `createRunplane(...)`: its handler and the `basePath` it serves. */
export interface ExpressMountable {
  handler: FetchHandler;
  basePath: string;
}

/** Express's `next`, typed structurally so the declarations need no `@types/express`. */
export type NextFunction = (error?: unknown) => void;

/** The request path, as the app saw it before any `app.use(path, ...)` stripped a mount path. */
function pathOf(req: IncomingMessage & { originalUrl?: string }): string {
  const target = req.originalUrl ?? req.url ?? "/";
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

const isBelow = (path: string, basePath: string) => basePath === "" || path === basePath || path.startsWith(`${basePath}/`);

/**
 * Express middleware serving runplane below its `basePath` and calling `next()` for every other
 * request, so the host's own routes keep working wherever they are registered:
 * `app.use(createExpressMiddleware(runplane))`. Place it before body parsers where you can; an
 * already-parsed JSON body is rebuilt. Paths below `basePath` belong to the API: one it has no route
 * for is answered 404 as a JSON:API document. An unexpected failure goes to Express's error handling
 * through `next(error)`.
 */
export function createExpressMiddleware(runplane: ExpressMountable) {
  const basePath = runplane.basePath.replace(/\/+$/, "");
  return (req: IncomingMessage, res: ServerResponse, next: NextFunction): void => {
    if (!isBelow(pathOf(req), basePath)) {
      next();
      return;
    }
    let request: Request;
    try {
      request = toWebRequest(req);
    } catch (error) {
      next(error);
      return;
    }
    runplane
      .handler(request, { remoteAddress: req.socket.remoteAddress ?? null })
      .then((response) => writeWebResponse(response, res))
      .catch((error: unknown) => {
        if (res.headersSent) res.destroy();
        else next(error);
      });
  };
}
