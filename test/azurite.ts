/**
 * Azurite, Microsoft's Azure Blob server, started from npm on a free loopback port: a real object store with real
 * conditional writes, for the tests that run Quiver on an `az://` root.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { ensureAzureContainer } from "@/server/storage/azure-container";
import { freePort } from "./oidc";

export const AZURITE_ACCOUNT = "devstoreaccount1";
/** Azurite's published development key: not a secret. */
export const AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface Azurite {
  port: number;
  endpoint: string;
  /** Lance storage options that reach this server. */
  storageOptions: Record<string, string>;
  /** A new empty container, and the environment that points Quiver at a prefix in it. */
  newRoot: (prefix?: string) => Promise<{ uri: string; env: Record<string, string> }>;
  stop: () => Promise<void>;
}

export function createContainer(endpoint: string, name: string): Promise<void> {
  return ensureAzureContainer(endpoint, AZURITE_ACCOUNT, AZURITE_KEY, name);
}

export function azuriteStorageOptions(endpoint: string): Record<string, string> {
  return { azure_storage_account_name: AZURITE_ACCOUNT, azure_storage_account_key: AZURITE_KEY, azure_storage_endpoint: endpoint, allow_http: "true" };
}

/** A new empty container on the Azurite at `endpoint`, and the environment that points Quiver at a prefix in it. */
export async function newAzuriteRoot(endpoint: string, prefix = "quiver"): Promise<{ uri: string; env: Record<string, string> }> {
  const container = `t${randomBytes(6).toString("hex")}`;
  await createContainer(endpoint, container);
  const uri = `az://${container}/${prefix}`;
  return { uri, env: { QUIVER_ROOT: uri, QUIVER_STORAGE_OPTIONS: JSON.stringify(azuriteStorageOptions(endpoint)) } };
}

let fileAzurite: Promise<Azurite> | undefined;
let started: Azurite | null = null;

/**
 * The test file's Azurite, started when first needed and stopped when the file is done (test/setup-azurite.ts). One
 * Azurite shared by a whole run held every file's blobs, and its garbage collection, every 10 minutes, then kept its
 * one thread busy for over a minute, in which no request was answered and the test under way timed out.
 */
export function sharedAzurite(): Promise<Azurite> {
  fileAzurite ??= startAzurite().then((azurite) => (started = azurite));
  return fileAzurite;
}

/** The file's Azurite in a run of the suites on an object store (`QUIVER_TEST_STORE=azurite`), started before its tests. */
export function testAzurite(): Azurite {
  if (!started) throw new Error("QUIVER_TEST_STORE=azurite needs the test file's Azurite, which test/setup-azurite.ts starts");
  return started;
}

export async function stopSharedAzurite(): Promise<void> {
  const azurite = fileAzurite;
  fileAzurite = undefined;
  started = null;
  if (azurite) await (await azurite).stop();
}

/** Starts Azurite; with `location`, its data is kept in that directory and outlives the process. */
export async function startAzurite(options: { port?: number; location?: string } = {}): Promise<Azurite> {
  const port = options.port ?? (await freePort());
  const args = ["--blobHost", "127.0.0.1", "--blobPort", String(port), "--disableTelemetry", "--silent", "--skipApiVersionCheck", "--loose"];
  args.push(...(options.location ? ["--location", options.location] : ["--inMemoryPersistence"]));
  let log = "";
  const child: ChildProcess = spawn("node_modules/.bin/azurite-blob", args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Azurite exited:\n${log}`);
    const up = await fetch(`${endpoint}?comp=list`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`Azurite did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    endpoint,
    storageOptions: azuriteStorageOptions(endpoint),
    newRoot: (prefix) => newAzuriteRoot(endpoint, prefix),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
