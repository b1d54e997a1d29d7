/** A table after many small inserts, before and after the automatic policy compacted it. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { api, NPM_START, queryArrow, streamOf, startQuiver } from "./harness.mjs";

/** On a root of its own: the inserts through a process without the policy, then the root served as `npm start` serves it. */
export async function maintenanceCase({ scratch, azurite, record }) {
  console.log("a table after 1,000 small inserts, before and after the automatic policy compacted it");
  const SMALL = 1000;
  const root = azurite ? "az://bench/maintenance" : path.join(scratch, "maintenance");
  if (!azurite) mkdirSync(root);
  const writer = await startQuiver(root, 3700 + Math.floor(Math.random() * 90), azurite?.storageOptions);
  const base = writer.base;
  await api(base, "/v1/table/small/create", { body: streamOf(0, 10) });
  for (let i = 1; i <= SMALL; i++) await api(base, "/v1/table/small/insert", { body: streamOf(i * 10, 10) });
  const health = async (at) => api(at, "/v1/table/small/maintenance/health", { method: "POST" });
  const latencies = async (at) => {
    const ms = [];
    for (let i = 0; i <= 30; i++) {
      const from = 10 * ((i * 97) % SMALL);
      const s = performance.now();
      await queryArrow(at, "small", { filter: `id >= ${from} AND id < ${from + 10}`, limit: 100 });
      if (i > 0) ms.push(performance.now() - s);
    }
    return ms;
  };
  const before = { health: await health(base), ms: await latencies(base) };
  writer.child.kill("SIGTERM");
  await new Promise((resolve) => writer.child.once("exit", resolve));
  // The same root served with the policy on, looking every second: it finds the table due and compacts it.
  const policy = await startQuiver(root, 3700 + Math.floor(Math.random() * 90), azurite?.storageOptions, NPM_START.workers, {
    ...NPM_START.env,
    QUIVER_MAINTENANCE_INTERVAL_S: "1",
  });
  const started = performance.now();
  let after;
  for (;;) {
    after = await health(policy.base);
    if (after.last_job?.status === "succeeded" && after.last_job.trigger === "policy") break;
    if (performance.now() - started > 300_000) throw new Error(`the policy did not compact within 5 minutes:\n${policy.log()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const afterMs = await latencies(policy.base);
  policy.child.kill("SIGTERM");
  await new Promise((resolve) => policy.child.once("exit", resolve));
  const name = `${SMALL.toLocaleString("en")} small inserts, after automatic compaction (baseline: before)`;
  record(name, "query of 10 rows by id range, p50", "ms", afterMs, before.ms, "< before");
  record(name, "fragments", "", [after.fragments], [before.health.fragments], "a few");
  record(name, "compaction job", "ms", [Date.parse(after.last_job.finished_at) - Date.parse(after.last_job.created_at)]);
}
