/**
 * Azurite, Microsoft's Azure Blob server, started from npm on a free loopback port: a real object store with real
 * conditional writes, for the tests that run Quiver on an `az://` root.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { ensureAzureContainer } from "@/server/storage/azure-container";
import { freePort } from "./oidc";
import type { StoreServer } from "./store-server";

export const AZURITE_ACCOUNT = "devstoreaccount1";
/** Azurite's published development key: not a secret. */
export const AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export type Azurite = StoreServer;

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

/** Starts Azurite, its blobs in memory. */
export async function startAzurite(): Promise<Azurite> {
  const port = await freePort();
  const args = [
    "--blobHost",
    "127.0.0.1",
    "--blobPort",
    String(port),
    "--disableTelemetry",
    "--silent",
    "--skipApiVersionCheck",
    "--loose",
    "--inMemoryPersistence",
  ];
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
    kind: "azurite",
    port,
    endpoint,
    storageOptions: azuriteStorageOptions(endpoint),
    storageOptionsVia: azuriteStorageOptions,
    // A SAS on the container: Azurite has no hierarchical namespace, which a directory SAS needs.
    vending: { QUIVER_VEND_CREDENTIALS: "container" },
    checksVendedScope: true,
    newRoot: (prefix) => newAzuriteRoot(endpoint, prefix),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
