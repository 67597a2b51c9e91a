import { Hono } from "hono";
import type { Runplane } from "../../src/index.js";

/** A Hono app serving runplane below its `basePath` and its own `GET /healthz`, registered after the mount. */
export function createHonoApp(runplane: Pick<Runplane, "handler" | "basePath">): Hono {
  const app = new Hono();
  // The whole mount (docs/guides/embedding.md, "Mount it in your framework"): hand runplane the untouched Web Request; other paths fall through.
  app.all(`${runplane.basePath}/*`, (c) => runplane.handler(c.req.raw));
  app.get("/healthz", (c) => c.text("ok"));
  return app;
}
