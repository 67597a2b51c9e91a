import express, { type Express } from "express";
import type { Runplane } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";

export interface ExpressAppOptions {
  /** Must equal the `basePath` given to `createRunplane`. Default `/api/v2`. */
  basePath?: string;
  /**
   * Install `express.json()` before the mount, as an app with a global body parser would. runplane
   * rebuilds the body from `req.body` then; the limit matches runplane's own 1 MiB.
   */
  parseJsonFirst?: boolean;
}

/** An Express 5 app serving its own `GET /healthz` next to runplane, mounted at `basePath`. */
export function createExpressApp(runplane: Pick<Runplane, "handler">, options: ExpressAppOptions = {}): Express {
  const basePath = options.basePath ?? "/api/v2";
  const app = express();
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok");
  });
  if (options.parseJsonFirst) app.use(express.json({ type: ["application/json", "application/vnd.api+json"], limit: "1mb" }));
  // The whole mount. Prefer it before any body parser; toNodeListener reads req.originalUrl, so the
  // mount path does not need to be stripped or restored.
  app.use(basePath, toNodeListener(runplane.handler));
  return app;
}
