import { describe, expect, it } from "vitest";
import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";
import { postgresReachable } from "../helpers/postgres.js";
import { countedPostgres, countedSqlite, measured, type CountedStorage } from "./counted-storages.js";
import { writeRouteWorld } from "./write-routes.js";

/**
 * decision D56: the statements each API write route costs per request, on SQLite and on
 * PostgreSQL, in steady state (the same route answered once before, so caches and prepared
 * statements are warm). The budgets are today's counts, the audit trail's one insert in the
 * write's own transaction (D53, D59: the chain's link and head advance happen inside that
 * statement) included: a change that adds a statement to a request fails here. Lower a
 * budget when a change lowers the count (the test prints the table; `BUDGET_TEXTS=1` also prints
 * each route's statements).
 */
type Cost = readonly [statements: number, transactions: number];
const BUDGET: Record<"sqlite" | "postgres", Record<string, Cost>> = {
  sqlite: {
    "POST /workspaces/:workspace_id/vars": [4, 1],
    "POST /workspaces/:workspace_id/vars (sensitive)": [4, 1],
    "PATCH /workspaces/:workspace_id/vars/:variable_id": [5, 1],
    "DELETE /workspaces/:workspace_id/vars/:variable_id": [5, 1],
    "POST /policy-sets/:policy_set_id/parameters": [5, 1],
    "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": [5, 1],
    "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": [5, 1],
    "POST /team-projects": [12, 1],
    "PATCH /team-projects/:id": [15, 1],
    "DELETE /team-projects/:id": [13, 1],
    "POST /agent-pools/:agent_pool_id/authentication-tokens": [5, 1],
    "DELETE /authentication-tokens/:token_id": [8, 1],
    "DELETE /agents/:agent_id": [7, 1],
    "POST /organizations/:organization_name/tasks": [6, 1],
    "PATCH /tasks/:task_id": [6, 1],
    "DELETE /tasks/:task_id": [6, 1],
    "POST /workspaces/:workspace_id/tasks": [7, 1],
    "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": [6, 1],
    "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": [6, 1],
    "POST /task-stages/:task_stage_id/actions/override": [13, 2],
    "POST /task-results/:task_result_id/actions/retry": [9, 1],
    "PATCH /task-results/:task_result_id/callback": [6, 2],
    "POST /runs/:run_id/comments": [5, 1],
  },
  postgres: {
    "POST /workspaces/:workspace_id/vars": [4, 1],
    "POST /workspaces/:workspace_id/vars (sensitive)": [4, 1],
    "PATCH /workspaces/:workspace_id/vars/:variable_id": [5, 1],
    "DELETE /workspaces/:workspace_id/vars/:variable_id": [5, 1],
    "POST /policy-sets/:policy_set_id/parameters": [5, 1],
    "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": [5, 1],
    "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": [5, 1],
    "POST /team-projects": [12, 1],
    "PATCH /team-projects/:id": [15, 1],
    "DELETE /team-projects/:id": [13, 1],
    "POST /agent-pools/:agent_pool_id/authentication-tokens": [5, 1],
    "DELETE /authentication-tokens/:token_id": [8, 1],
    "DELETE /agents/:agent_id": [7, 1],
    "POST /organizations/:organization_name/tasks": [6, 1],
    "PATCH /tasks/:task_id": [6, 1],
    "DELETE /tasks/:task_id": [5, 1],
    "POST /workspaces/:workspace_id/tasks": [6, 1],
    "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": [6, 1],
    "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": [6, 1],
    "POST /task-stages/:task_stage_id/actions/override": [13, 1],
    "POST /task-results/:task_result_id/actions/retry": [8, 0],
    "PATCH /task-results/:task_result_id/callback": [6, 1],
    "POST /runs/:run_id/comments": [6, 1],
  },
};

function budgetCases(name: keyof typeof BUDGET, open: () => Promise<CountedStorage>) {
  it(`${name}: every write route costs at most today's statements per request`, async () => {
    const counted = await open();
    try {
      const { app, routes } = await writeRouteWorld(counted.storage);
      const written = Object.keys(ROUTE_PERMISSIONS).filter((route) => !route.startsWith("GET "));
      // Every write route of the API has a request here.
      expect(written.filter((route) => !(route in routes))).toEqual([]);
      const table: Record<string, Cost> = {};
      for (const [route, request] of Object.entries(routes)) {
        const method = route.split(" ")[0]!;
        const send = async (r: Awaited<ReturnType<typeof request>>) => {
          const res = await app.call(method, r.path, { body: r.body, ...(r.token ? { token: r.token } : {}) });
          expect(res.status, `${route}: ${res.text}`).toBeLessThan(300);
        };
        await send(await request()); // warm-up
        const next = await request(); // its set-up is not counted
        if (process.env.BUDGET_TEXTS) counted.count.texts = new Map();
        const { cost } = await measured(counted.count, () => send(next));
        for (const [text, n] of counted.count.texts ?? []) console.log(`${route}\t${n}\t${text.replace(/\s+/g, " ").slice(0, 140)}`);
        table[route] = [cost.statements, cost.transactions];
      }
      const lines = Object.entries(table).map(([route, [statements, transactions]]) => `  ${JSON.stringify(route)}: [${statements}, ${transactions}],`);
      console.log(`statement budget, write routes, ${name} (statements, transactions per request):\n${lines.join("\n")}`);
      for (const [route, [statements, transactions]] of Object.entries(table)) {
        const budget = BUDGET[name][route];
        expect(budget, `${route}: no budget yet, today ${statements} statements`).toBeDefined();
        expect(statements, `${route}: statements per request`).toBeLessThanOrEqual(budget![0]);
        expect(transactions, `${route}: transactions per request`).toBeLessThanOrEqual(budget![1]);
      }
      await app.runplane.close();
    } finally {
      await counted.dispose();
    }
  }, 120_000);
}

describe("statement budget per write request (decision D56)", () => {
  budgetCases("sqlite", async () => countedSqlite());
});

if (await postgresReachable("statement budget per write request")) {
  describe("statement budget per write request on PostgreSQL (decision D56)", () => {
    budgetCases("postgres", () => countedPostgres("budget_api"));
  });
}
