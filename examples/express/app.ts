import express, { type Express } from "express";
import type { Runplane } from "../../src/index.js";
import { createExpressMiddleware } from "../../src/express.js";

export interface ExpressAppOptions {
  /**
   * Install `express.json()` before the mount, as an app with a global body parser would. runplane
   * rebuilds the body from `req.body` then; the limit matches runplane's own 1 MiB.
   */
  parseJsonFirst?: boolean;
}

/** An Express 5 app serving runplane below its `basePath` and its own `GET /healthz`, registered after the mount. */
export function createExpressApp(runplane: Pick<Runplane, "handler" | "basePath">, options: ExpressAppOptions = {}): Express {
  const app = express();
  if (options.parseJsonFirst) app.use(express.json({ type: ["application/json", "application/vnd.api+json"], limit: "1mb" }));
  // The whole mount (docs/guides/embedding.md, "Mount it in your framework"): requests outside runplane.basePath go on to next().
  app.use(createExpressMiddleware(runplane));
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok");
  });
  return app;
}
