import { serve } from "@hono/node-server";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane } from "../../src/index.js";
import { createHonoApp } from "./app.js";

const runplane = createRunplane({ storage: createMemoryStorage() });
await runplane.directory.organizations.create({ name: "demo" });
await runplane.directory.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "demo" });
const { token } = await runplane.directory.createApiToken({ organization: "demo", kind: "team", teamId: "team-owners" });

const port = Number(process.env.PORT ?? 3000);
serve({ fetch: createHonoApp(runplane).fetch, port }, (info) => {
  console.log(`runplane on Hono: http://localhost:${info.port}/api/v2/ping (organization "demo", owners token ${token})`);
});
