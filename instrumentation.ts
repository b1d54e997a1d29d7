/**
 * Runs once when the server starts: checks the settings and that the data root's store answers (a server that
 * cannot serve says so in one line and exits, rather than failing request after request), lets API handlers read
 * request bodies from Node's own request, opens the default database, starts the automatic maintenance policy, makes
 * the console's session secret (so that no request, refused ones included, is what first writes it), and issues the
 * first admin key if none exists.
 */
const STARTUP_STORE_TIMEOUT_MS = 20_000;

export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // First, before anything awaits: the capture must wrap the http server before it takes its first request.
  const { captureNodeRequests } = await import("./server/http/body-source");
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
  // First, so that a bad log setting stops the server here rather than failing a request.
  await import("./server/log");
  // Loaded now, not at the first API request: under workers the primary may ask this process for its metrics first.
  await import("./server/metrics");
  const { config } = await import("./server/config");
  const { rootStore } = await import("./server/storage/stores");
  const { credentialVendor } = await import("./server/storage/credentials");
  const vendor = credentialVendor();
  const { storeAnswers } = await import("./server/storage/readiness");
  const answer = await storeAnswers(rootStore(), STARTUP_STORE_TIMEOUT_MS);
  if (!answer.ready) throw new Error(`the data root ${config.root.uri} cannot be reached: ${answer.reason} (check QUIVER_ROOT and QUIVER_STORAGE_OPTIONS)`);
  await vendor.check();
  const { defaultDatabase } = await import("@/server/databases");
  const { access } = await import("./server/auth/access");
  const { sessionSecret } = await import("./server/auth/session");
  await defaultDatabase();
  const { startMaintenancePolicy } = await import("./server/maintenance/scheduler");
  startMaintenancePolicy();
  await sessionSecret();
  const key = await access().bootstrap();
  if (key) {
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
}
