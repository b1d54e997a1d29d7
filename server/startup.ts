/**
 * What a server process does once, before its first request (instrumentation.ts calls it on Node only, so that none of
 * it is compiled for the Edge runtime): checks the settings and that the data root's store answers (a server that
 * cannot serve says so in one line and exits, rather than failing request after request), lets API handlers read
 * request bodies from Node's own request, opens the default database, starts the automatic maintenance policy and the
 * operations page's history, writes this process into the root's roster, makes
 * the console's session secret (so that no request, refused ones included, is what first writes it), and issues the
 * first admin key if none exists.
 */
import "server-only";
import cluster from "node:cluster";
import { captureNodeRequests } from "./http/body-source";

export async function startServer(): Promise<void> {
  // First, before anything awaits: the capture must wrap the http server before it takes its first request.
  captureNodeRequests();
  try {
    await start();
  } catch (err) {
    const line =
      err instanceof Error && err.name === "ConfigError" ? err.message : `cannot start: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`;
    console.error(`quiver: ${line}`);
    process.exit(1);
  }
}

async function start() {
  // Without a configured public address, the console's sign-in, sign-out and their redirects use the address it was
  // opened at (next-auth reads it from the request's Host when told to trust it; proxy.ts adds the scheme).
  if (!process.env.NEXTAUTH_URL) process.env.AUTH_TRUST_HOST = "true";
  // First, so that a bad log setting stops the server here rather than failing a request.
  await import("./log");
  const { startTracing } = await import("./tracing");
  await startTracing();
  // Loaded now, not at the first API request: under workers the primary may ask this process for its metrics first.
  await import("./metrics");
  const { prepareStore, rootStore } = await import("./storage/stores");
  const { credentialVendor } = await import("./storage/credentials");
  const vendor = credentialVendor();
  // A missing bucket, refused credentials or a store that cannot be reached stop the start here, in one line.
  await prepareStore(rootStore());
  await vendor.check();
  const { startEngineReadCache } = await import("./storage/read-cache/engine-store");
  await startEngineReadCache();
  const { defaultDatabase } = await import("./databases");
  const { access } = await import("./auth/access");
  const { sessionSecret } = await import("./auth/session");
  await defaultDatabase();
  const { startMaintenancePolicy } = await import("./maintenance/scheduler");
  startMaintenancePolicy();
  // The operations page's figures start with the server; the roster says to the other instances where it runs.
  const { processHistory } = await import("./operations/overview");
  processHistory();
  const { joinRoster } = await import("./operations/roster");
  const { log } = await import("./log");
  await joinRoster(rootStore()).catch((err: unknown) =>
    log.warn({ err }, "this process's record in the roster could not be written; the operations page lists it once it is"),
  );
  await sessionSecret();
  const key = await access().bootstrap();
  announceStarted(key);
}

/**
 * Says the start is done, with the first admin key when this start made it (shown this once). A worker of `npm
 * start` tells the primary, which ends the start's output with it (scripts/worker-output.mjs); a lone `next start`
 * prints the key.
 */
function announceStarted(key: string | null) {
  if (cluster.isWorker && process.send) {
    process.send({ type: "quiver:started", key });
    return;
  }
  if (!key) return;
  console.log(
    [
      "",
      "Quiver created the first admin API key. It is shown this once; only its hash is kept.",
      `  ${key}`,
      "Use it as the x-api-key header, or sign in to the console with it as an access key.",
      "",
    ].join("\n"),
  );
}
