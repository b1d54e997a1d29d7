/** describe and a query under load, served with one worker and with one per core. */
import os from "node:os";
import { api, streamOf, load, startQuiver, KEY } from "./harness.mjs";

export async function workersCase({ root, azurite, record }) {
  console.log("describe and a 1,000-row query under load, served by npm start with 1 worker and with one per core");
  const cores = os.availableParallelism();
  // The load generator shares the host's cores: a call as cheap as describe leaves the server waiting on it, so
  // the scaling is also shown with a query whose work is the server's.
  const requests = {
    describe: (at) => [`${at}/v1/table/workerst/describe`, { method: "POST", headers: { "x-api-key": KEY } }],
    "query of 1,000 rows": (at) => [
      `${at}/v1/table/workerst/query`,
      { method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: JSON.stringify({ filter: "id >= 5000", k: 1000 }) },
    ],
  };
  const rates = {};
  for (const workers of [1, cores]) {
    const instance = await startQuiver(root, 3800 + Math.floor(Math.random() * 90), azurite?.storageOptions, workers);
    if (workers === 1) await api(instance.base, "/v1/table/workerst/create", { body: streamOf(0, 100_000) });
    for (const [name, request] of Object.entries(requests)) {
      await load(...request(instance.base), 3);
      (rates[name] ??= {})[workers] = await load(...request(instance.base), 5);
    }
    instance.child.kill("SIGTERM");
    await new Promise((resolve) => instance.child.once("exit", resolve));
  }
  for (const [name, rate] of Object.entries(rates)) {
    record(`${name} under load, QUIVER_WORKERS=${cores} (baseline: 1)`, "req/s", "req/s", [rate[cores].rps], [rate[1].rps], "grows with workers");
    record(`${name} under load, QUIVER_WORKERS=${cores} (baseline: 1)`, "p99", "ms", [rate[cores].p99], [rate[1].p99]);
  }
}
