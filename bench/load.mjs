/** describe and namespace list under 32 connections, against a bare http server doing the same catalog work. */
import { spawn, spawnSync } from "node:child_process";
import { api, streamOf, load, KEY } from "./harness.mjs";

export async function loadCase({ base, quiver, root, azurite, record }) {
  console.log("describe and namespace list under 32 concurrent connections");
  spawnSync(
    "node_modules/.bin/esbuild",
    [
      "bench/bare-server.ts",
      "--bundle",
      "--platform=node",
      "--format=esm",
      "--outfile=bench/.build/bare-server.mjs",
      // Packages stay in node_modules (native modules cannot be bundled); Node loads them as the server does, with
      // React's server condition, under which server-only is empty.
      "--packages=external",
      "--log-level=error",
    ],
    { stdio: "inherit" },
  );
  await api(base, "/v1/table/loadt/create", { body: streamOf(0, 1000) });
  const barePort = 3990 + Math.floor(Math.random() * 9);
  const bare = spawn("node", ["--conditions=react-server", "bench/.build/bare-server.mjs"], {
    env: {
      ...process.env,
      QUIVER_ROOT: root,
      ...(azurite ? { QUIVER_STORAGE_OPTIONS: JSON.stringify(azurite.storageOptions) } : {}),
      PORT: String(barePort),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((resolve) => bare.stdout.on("data", (d) => String(d).includes("ready") && resolve()));
  // Three rounds, each measuring every target in turn, so that a busy spell of a shared host weighs on all of them
  // alike; medians over the rounds are reported.
  const targets = {
    describe: [[`${base}/v1/table/loadt/describe`, { method: "POST", headers: { "x-api-key": KEY } }], `http://127.0.0.1:${barePort}/describe/loadt`],
    "namespace list": [[`${base}/v1/namespace/%24/list?limit=100`, { headers: { "x-api-key": KEY } }], `http://127.0.0.1:${barePort}/namespaces`],
  };
  const floorUrl = `${base}/healthz`;
  for (const [quiverReq, bareUrl] of Object.values(targets)) {
    await load(...quiverReq, 3);
    await load(bareUrl, {}, 1);
  }
  await load(floorUrl, {}, 3);
  const measured = { floor: [] };
  for (let round = 0; round < 3; round++) {
    for (const [name, [quiverReq, bareUrl]] of Object.entries(targets)) {
      measured[name] ??= { quiver: [], bare: [] };
      measured[name].quiver.push(await load(...quiverReq, 5, quiver.child.pid));
      measured[name].bare.push(await load(bareUrl, {}, 5, bare.pid));
    }
    measured.floor.push(await load(floorUrl, {}, 5, quiver.child.pid));
  }
  const of = (runs, key) => runs.map((r) => r[key]);
  for (const name of Object.keys(targets)) {
    const { quiver: q, bare: b } = measured[name];
    record(`${name} under load`, "req/s", "req/s", of(q, "rps"), of(b, "rps"), "≥ 0.6× bare http");
    record(`${name} under load`, "p50", "ms", of(q, "p50"), of(b, "p50"));
    record(`${name} under load`, "p99", "ms", of(q, "p99"), of(b, "p99"), "≤ 50 ms");
    record(`${name} under load`, "server CPU per request", "ms", of(q, "cpuMs"), of(b, "cpuMs"));
  }
  // What any Next.js route handler costs: the liveness route does no work at all.
  const floor = measured.floor;
  const bareList = measured["namespace list"].bare;
  record("Next.js floor: GET /healthz (no work) under load", "req/s, against bare http's namespace list", "req/s", of(floor, "rps"), of(bareList, "rps"));
  record("Next.js floor: GET /healthz (no work) under load", "p99", "ms", of(floor, "p99"), of(bareList, "p99"));
  record("Next.js floor: GET /healthz (no work) under load", "server CPU per request", "ms", of(floor, "cpuMs"), of(bareList, "cpuMs"));
  for (const name of Object.keys(targets))
    record(
      `${name} under load (baseline: GET /healthz)`,
      "server CPU per request",
      "ms",
      of(measured[name].quiver, "cpuMs"),
      of(floor, "cpuMs"),
      "≤ 1.3× the do-nothing route",
    );
  bare.kill();
}
