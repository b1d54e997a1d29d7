/**
 * Catalog writes as a program makes them: the Lance REST namespace client creating empty tables in 4 namespaces,
 * 4 at a time (it declares each through Quiver, then writes the dataset itself), against Lance's directory namespace
 * doing the same in-process on a root of its own; then bare DeclareTable and CreateNamespace calls. The rate is
 * reported per window of tables as the catalog grows. Quiver runs as `npm start` runs it, and on a local root also as
 * one process with maintenance off, side by side. On Azurite, Quiver runs as 1, 2 and 4 instances on one root,
 * each as `npm start` runs it, the clients' calls spread over them.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { NPM_START } from "./harness.mjs";

const CLIENTS = 4;
/** Beside Quiver as `npm start` runs it, the leaner one process without the maintenance policy. */
const LEAN = { name: "one process, maintenance off", workers: undefined, env: {} };
const NAMESPACES = 4;

/** Creates `count` tables with `clients` workers through `connections` in turn; answers each completion time. */
async function createTables(connections, schema, count, offset = 0) {
  let next = 0;
  const done = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, worker) => {
      const connection = connections[worker % connections.length];
      for (let i = next++; i < count; i = next++) {
        await connection.createEmptyTable(`t${offset + i}`, schema, [`n${(offset + i) % NAMESPACES}`]);
        done.push(performance.now());
      }
    }),
  );
  done.sort((a, b) => a - b);
  return { start, done };
}

/** Tables per second in each window of `window` completions. */
function rates({ start, done }, window) {
  const out = [];
  for (let k = window; k <= done.length; k += window) out.push(window / ((done[k - 1] - (k === window ? start : done[k - window - 1])) / 1000));
  return out;
}

/** Tables per second over the first `count` completions (all of them by default). */
const overall = ({ start, done }, count = done.length) => count / ((done[count - 1] - start) / 1000);

/**
 * What the run asked of the store, per table: requests, catalog commits (new `__manifest` versions: fewer than one
 * when commits carry several tables), and conditional writes the store refused (a commit that lost a race to another
 * writer's and was retried).
 */
function storeProfile(proxy, count) {
  if (!proxy) return null;
  const requests = proxy.requests();
  const commits = requests.filter((r) => r.kind === "write" && /__manifest\/_versions\/[^/]+\.manifest$/.test(r.path) && r.status < 300).length;
  const lost = requests.filter((r) => r.kind === "write" && /__manifest\//.test(r.path) && (r.status === 409 || r.status === 412)).length;
  return { requests: requests.length / count, commits: commits / count, lost: lost / count };
}

const profileText = (p) =>
  p ? `; ${p.requests.toFixed(1)} requests, ${p.commits.toFixed(2)} catalog commits, ${p.lost.toFixed(2)} lost commit races per table` : "";

/** `ctx`: { lancedb, arrow, key, record, scratch, startQuiver, settle, azurite, proxy, tables, dirTables, extraTables } */
export async function catalogCase(ctx) {
  const { lancedb, arrow, key, record, settle } = ctx;
  // Run alone, before the latency case has set it, the proxy would answer at once.
  ctx.proxy?.setLatency(ctx.latency);
  const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int64(), false)]);
  const onStore = ctx.azurite !== null;
  const dirConfig = (root) =>
    onStore
      ? {
          root,
          extraProperties: {
            vend_input_storage_options: "true",
            ...Object.fromEntries(Object.entries(ctx.azurite.storageOptions).map(([k, v]) => [`storage.${k}`, v])),
          },
        }
      : { root };
  const fresh = (name) => {
    if (onStore) return `az://bench/${name}`;
    const dir = path.join(ctx.scratch, name);
    mkdirSync(dir);
    return dir;
  };
  const lines = [];

  const dirRun = async (count, window) => {
    const dir = await lancedb.connectNamespace("dir", dirConfig(fresh(`dir-${Date.now()}`)));
    for (let n = 0; n < NAMESPACES; n++) await dir.createNamespace([`n${n}`]);
    ctx.proxy?.reset();
    const run = await createTables([dir], schema, count);
    const store = storeProfile(ctx.proxy, count);
    settle();
    return { run, rates: rates(run, window), store, connection: dir };
  };
  const quiverRun = async (instances, count, window, configuration) => {
    const root = fresh(`quiver-${Date.now()}`);
    const servers = [];
    for (let k = 0; k < instances; k++) {
      servers.push(
        await ctx.startQuiver(root, 3600 + k * 10 + Math.floor(Math.random() * 9), ctx.azurite?.storageOptions, configuration.workers, {
          ...configuration.env,
          ...(onStore ? { QUIVER_VEND_CREDENTIALS: "container" } : {}),
        }),
      );
    }
    try {
      const connections = await Promise.all(servers.map((s) => lancedb.connectNamespace("rest", { uri: s.base, headers: { "x-api-key": key } })));
      for (let n = 0; n < NAMESPACES; n++) await connections[0].createNamespace([`n${n}`]);
      ctx.proxy?.reset();
      const run = await createTables(connections, schema, count);
      const store = storeProfile(ctx.proxy, count);
      settle();
      return { run, rates: rates(run, window), store, servers };
    } catch (err) {
      // What the servers logged as errors says what went wrong on their side (a client sees only a request id).
      for (const s of servers) {
        for (const line of s.log().split("\n")) if (/"level":(50|60)|"status":5\d\d/.test(line)) console.error(line);
        s.child.kill("SIGTERM");
      }
      throw err;
    }
  };
  const stop = async (servers) => {
    for (const s of servers) {
      s.child.kill("SIGTERM");
      await new Promise((resolve) => s.child.once("exit", resolve));
    }
  };
  const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(", ");

  if (!onStore) {
    const count = ctx.tables;
    const window = Math.max(100, Math.floor(count / 10));
    console.log(`  ${count.toLocaleString("en")} tables in ${NAMESPACES} namespaces, ${CLIENTS} clients; rates per ${window.toLocaleString("en")} tables`);
    const dirCount = Math.min(count, ctx.dirTables);
    const dirPart = dirCount < count ? ` (dir namespace: first ${dirCount.toLocaleString("en")})` : "";
    const dir = await dirRun(dirCount, window);
    console.log(`  dir namespace: ${fmt(dir.rates)} tables/s`);
    const lean = await quiverRun(1, count, window, LEAN);
    console.log(`  Quiver (${LEAN.name}): ${fmt(lean.rates)} tables/s`);
    await stop(lean.servers);
    record(
      "catalog writes, local root",
      `createEmptyTable, whole run of ${count.toLocaleString("en")} tables${dirPart}, ${LEAN.name}`,
      "tables/s",
      [overall(lean.run)],
      [overall(dir.run)],
    );
    lines.push(
      `| local root, ${LEAN.name}, createEmptyTable, per ${window.toLocaleString("en")} tables${dirPart} | ${fmt(dir.rates)} | ${fmt(lean.rates)} | ${(overall(lean.run) / overall(dir.run)).toFixed(2)}× overall |`,
    );
    const quiver = await quiverRun(1, count, window, NPM_START);
    console.log(`  Quiver (${NPM_START.name}): ${fmt(quiver.rates)} tables/s`);
    const at10k = Math.min(quiver.rates.length, Math.floor(10_000 / window)) - 1;
    record(
      "catalog writes, local root",
      `createEmptyTable, whole run of ${count.toLocaleString("en")} tables${dirPart}, ${NPM_START.name}`,
      "tables/s",
      [overall(quiver.run)],
      [overall(dir.run)],
      "≥ 1.0× dir",
      overall(quiver.run) >= overall(dir.run),
    );
    // Where the dir namespace's catalog is still small and fast.
    const early = Math.min(2_000, dirCount);
    record(
      "catalog writes, local root",
      `createEmptyTable, first ${early.toLocaleString("en")} tables`,
      "tables/s",
      [overall(quiver.run, early)],
      [overall(dir.run, early)],
      "≥ 0.8× dir",
      overall(quiver.run, early) >= 0.8 * overall(dir.run, early),
    );
    record(
      "catalog writes, local root",
      `createEmptyTable, tables ${((at10k * window) / 1000).toFixed(0)}k-${(((at10k + 1) * window) / 1000).toFixed(0)}k (baseline: Quiver's first window)`,
      "tables/s",
      [quiver.rates[at10k]],
      [quiver.rates[0]],
      "≥ 0.8× the start",
      quiver.rates[at10k] >= 0.8 * quiver.rates[0],
    );
    record(
      "catalog writes, local root",
      `createEmptyTable, last ${window.toLocaleString("en")} tables${dirPart}`,
      "tables/s",
      [quiver.rates.at(-1)],
      [dir.rates.at(-1)],
    );
    lines.push(
      `| local root, ${NPM_START.name}, createEmptyTable, per ${window.toLocaleString("en")} tables${dirPart} | ${fmt(dir.rates)} | ${fmt(quiver.rates)} | ${(overall(quiver.run) / overall(dir.run)).toFixed(2)}× overall |`,
    );

    // Bare calls on the same catalog, which now holds the tables above; the server stops however they end.
    const base = quiver.servers[0].base;
    try {
      const call = (p) => fetch(base + p, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: "{}" });
      const bare = async (count, make) => {
        let next = 0;
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: CLIENTS }, async () => {
            for (let i = next++; i < count; i = next++) {
              const res = await make(i);
              if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
            }
          }),
        );
        return count / ((performance.now() - t0) / 1000);
      };
      const declares = await bare(2_000, (i) => call(`/v1/table/n${i % NAMESPACES}$bare${i}/declare`));
      const namespaces = await bare(500, (i) => call(`/v1/namespace/bare${i}/create`));
      const dirNamespaces = await (async () => {
        let next = 0;
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: CLIENTS }, async () => {
            for (let i = next++; i < 500; i = next++) await dir.connection.createNamespace([`bare${i}`]);
          }),
        );
        return 500 / ((performance.now() - t0) / 1000);
      })();
      record(
        "catalog writes, local root",
        "bare DeclareTable calls (baseline: the dir namespace's createEmptyTable, which also writes the dataset)",
        "calls/s",
        [declares],
        [overall(dir.run)],
      );
      record(
        "catalog writes, local root",
        "bare CreateNamespace calls (baseline: the dir namespace's createNamespace)",
        "calls/s",
        [namespaces],
        [dirNamespaces],
        "≥ 1.0× dir",
        namespaces >= dirNamespaces,
      );
      lines.push(
        `| local root, bare calls on that catalog | createNamespace ${dirNamespaces.toFixed(0)}/s | DeclareTable ${declares.toFixed(0)}/s, CreateNamespace ${namespaces.toFixed(0)}/s | |`,
      );
    } finally {
      await stop(quiver.servers);
    }
  } else {
    const count = ctx.tables;
    const window = Math.max(50, Math.floor(count / 4));
    console.log(`  ${count} tables on one Azurite${ctx.proxy ? " behind the latency proxy" : ""}, ${CLIENTS} clients spread over the instances`);
    const dir = await dirRun(count, window);
    console.log(`  dir namespace: ${fmt(dir.rates)} tables/s`);
    const totals = {};
    for (const instances of [1, 2, 4]) {
      const quiver = await quiverRun(instances, count, window, NPM_START);
      await stop(quiver.servers);
      totals[instances] = overall(quiver.run);
      console.log(`  Quiver × ${instances}:    ${fmt(quiver.rates)} tables/s`);
      const name = `catalog writes, Azurite${ctx.proxy ? `, ${ctx.latency} ms per request` : ""}`;
      record(
        name,
        `createEmptyTable, ${instances} instance${instances > 1 ? "s" : ""}, ${count} tables`,
        "tables/s",
        [overall(quiver.run)],
        [overall(dir.run)],
        "≥ 1.0× dir",
        overall(quiver.run) >= overall(dir.run),
      );
      if (quiver.store) {
        const of = `${instances} instance${instances > 1 ? "s" : ""}`;
        record(name, `store requests per table, ${of}`, "", [quiver.store.requests], [dir.store.requests]);
        record(name, `catalog commits per table, ${of}`, "", [quiver.store.commits], [dir.store.commits]);
        record(name, `lost commit races per table, ${of}`, "", [quiver.store.lost], [dir.store.lost]);
      }
      lines.push(
        `| Azurite${ctx.proxy ? ` (${ctx.latency} ms)` : ""}, ${instances} instance${instances > 1 ? "s" : ""}, per ${window} tables | ${fmt(dir.rates)}${profileText(dir.store)} | ${fmt(quiver.rates)}${profileText(quiver.store)} | ${(overall(quiver.run) / overall(dir.run)).toFixed(2)}× |`,
      );
    }
    // Behind latency round trips are the limit, which more instances must not add to; without it, this machine's
    // two cores are, which more instances share.
    const least = ctx.proxy && ctx.latency > 0 ? 1.0 : 0.8;
    for (const instances of [2, 4]) {
      record(
        `catalog writes, Azurite${ctx.proxy ? `, ${ctx.latency} ms per request` : ""}`,
        `total rate, ${instances} instances (baseline: 1)`,
        "tables/s",
        [totals[instances]],
        [totals[1]],
        `≥ ${least.toFixed(1)}× one instance`,
        totals[instances] >= least * totals[1],
      );
    }
  }
  ctx.extraTables.push(
    ["Catalog writes (tables/s per window as the catalog grows):", "", "| run | Lance dir namespace | Quiver | ratio |", "|---|---|---|---|", ...lines].join(
      "\n",
    ),
  );
}
