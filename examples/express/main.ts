import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane } from "../../src/index.js";
import { createExpressApp } from "./app.js";

const runplane = createRunplane({ storage: createMemoryStorage() });
await runplane.directory.organizations.create({ name: "demo" });
await runplane.directory.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "demo" });
const { token } = await runplane.directory.createApiToken({ organization: "demo", kind: "team", teamId: "team-owners" });

const port = Number(process.env.PORT ?? 3000);
const server = createExpressApp(runplane).listen(port, (error) => {
  // Express 5 passes listen errors (EADDRINUSE, EACCES) to this callback.
  if (error) throw error;
  const { port: bound } = server.address() as { port: number };
  console.log(`runplane on Express: http://localhost:${bound}/api/v2/ping (organization "demo", owners token ${token})`);
});
