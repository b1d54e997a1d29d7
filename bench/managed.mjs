/**
 * What managed versioning costs a writer: the Lance REST namespace client adding 100 rows at a time to a table whose
 * versions Quiver manages (each commit a CreateTableVersion call with a staged manifest) and to an unmanaged table
 * (the client commits to the store itself), each on a Quiver of its own on the same store, in the same run.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { median, NPM_START, traceStoreRequests } from "./harness.mjs";

const ADDS = 30;

/** `ctx`: { lancedb, arrow, key, record, scratch, startQuiver, azurite, proxy, latency } */
export async function managedCase(ctx) {
  const { lancedb, arrow, key, record } = ctx;
  ctx.proxy?.setLatency(ctx.latency);
  const onStore = ctx.azurite !== null;
  const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int64(), false), new arrow.Field("x", new arrow.Float64(), false)]);
  const rows = (from) =>
    lancedb.makeArrowTable(
      Array.from({ length: 100 }, (_, i) => ({ id: BigInt(from + i), x: from + i })),
      { schema },
    );
  const side = async (managed) => {
    const name = `${managed ? "managed" : "unmanaged"}-${Date.now()}`;
    const root = onStore ? `az://bench/${name}` : path.join(ctx.scratch, name);
    if (!onStore) mkdirSync(root);
    const server = await ctx.startQuiver(root, 3500 + (managed ? 0 : 50) + Math.floor(Math.random() * 40), ctx.azurite?.storageOptions, NPM_START.workers, {
      ...NPM_START.env,
      QUIVER_MANAGED_VERSIONING: managed ? "on" : "off",
      ...(onStore ? { QUIVER_VEND_CREDENTIALS: "container" } : {}),
    });
    try {
      const ns = await lancedb.connectNamespace("rest", { uri: server.base, headers: { "x-api-key": key } });
      await ns.createNamespace(["m"]);
      const table = await ns.createTable("t", rows(0), ["m"]);
      for (let i = 1; i <= 3; i++) await table.add(rows(i * 100));
      const times = [];
      let requests = 0;
      for (let i = 0; i < ADDS; i++) {
        ctx.proxy?.reset();
        const start = performance.now();
        await table.add(rows((i + 4) * 100));
        times.push(performance.now() - start);
        requests += ctx.proxy ? ctx.proxy.requests().length : 0;
        if (process.env.BENCH_TRACE && ctx.proxy && i === ADDS - 1)
          traceStoreRequests(`${managed ? "managed" : "unmanaged"} add`, times.at(-1), ctx.proxy.requests());
      }
      const described = await fetch(`${server.base}/v1/table/m$t/describe`, { method: "POST", headers: { "x-api-key": key }, body: "{}" }).then((r) =>
        r.json(),
      );
      if (described.managed_versioning !== managed || described.version !== ADDS + 4) {
        throw new Error(`the ${managed ? "managed" : "unmanaged"} table is at version ${described.version}, managed ${described.managed_versioning}`);
      }
      return { times, requests: ctx.proxy ? requests / ADDS : null };
    } finally {
      server.child.kill("SIGTERM");
      await new Promise((resolve) => server.child.once("exit", resolve));
    }
  };
  const plain = await side(false);
  const managed = await side(true);
  const where = onStore ? `Azurite${ctx.proxy ? `, ${ctx.latency} ms per request` : ""}` : "local root";
  record(
    `managed versioning, ${where}`,
    `add 100 rows through the REST namespace client, p50 of ${ADDS} (baseline: an unmanaged table)`,
    "ms",
    managed.times,
    plain.times,
    "≤ 1.2× unmanaged",
    median(managed.times) <= 1.2 * median(plain.times),
  );
  if (managed.requests !== null)
    record(`managed versioning, ${where}`, "store requests per add (baseline: an unmanaged table)", "", [managed.requests], [plain.requests]);
}
