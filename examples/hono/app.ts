import { Hono } from "hono";
import type { Runplane } from "../../src/index.js";

export interface HonoAppOptions {
  /** Must equal the `basePath` given to `createRunplane`. Default `/api/v2`. */
  basePath?: string;
}

/** A Hono app serving its own `GET /healthz` next to runplane, mounted at `${basePath}/*`. */
export function createHonoApp(runplane: Pick<Runplane, "handler">, options: HonoAppOptions = {}): Hono {
  const basePath = options.basePath ?? "/api/v2";
  const app = new Hono();
  app.get("/healthz", (c) => c.text("ok"));
  // The whole mount: hand runplane the untouched Web Request.
  app.all(`${basePath}/*`, (c) => runplane.handler(c.req.raw));
  return app;
}
