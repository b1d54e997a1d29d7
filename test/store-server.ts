/**
 * The object-store servers the tests run Quiver and the engine on: Azurite (Azure Blob, from npm) and moto's S3
 * server (from the machine's Python), each a real server with real conditional writes, started on a free loopback
 * port. `QUIVER_TEST_STORE` (`azurite` or `s3`) says which one a run puts every server's data root on; the files that
 * start a store of their own start that kind too, and Azurite in a run that names none.
 */

export type StoreServerKind = "azurite" | "s3";

/** How the tests (and docs/object-storage.md's table of conditions) name each store. */
export const STORE_NAMES: Record<StoreServerKind, string> = { azurite: "Azure Blob (Azurite)", s3: "S3 (moto)" };

export interface StoreServer {
  kind: StoreServerKind;
  port: number;
  /** Where clients reach it: Azurite's with its account path, moto's without a path. */
  endpoint: string;
  /** Lance storage options that reach this server. */
  storageOptions: Record<string, string>;
  /** The same options, reaching the server through another endpoint (a proxy in front of it). */
  storageOptionsVia: (endpoint: string) => Record<string, string>;
  /** The settings that make a server on it vend credentials to clients that write the data themselves. */
  vending: Record<string, string>;
  /** Whether it holds vended credentials to what they allow (Azurite checks a SAS; moto checks no session policy). */
  checksVendedScope: boolean;
  /** A new empty container (bucket), and the environment that points Quiver at a prefix in it. */
  newRoot: (prefix?: string) => Promise<{ uri: string; env: Record<string, string> }>;
  stop: () => Promise<void>;
}

/** The store this run keeps every server's data root on, or none (a local directory). */
export const testStoreKind: StoreServerKind | undefined = (() => {
  const named = process.env.QUIVER_TEST_STORE;
  if (named === undefined || named === "") return undefined;
  if (named === "azurite" || named === "s3") return named;
  throw new Error(`QUIVER_TEST_STORE must be 'azurite' or 's3', got '${named}'`);
})();

/** The kind a file that starts a store of its own starts: this run's, or Azurite in a run on local roots. */
export const storeKindForFile: StoreServerKind = testStoreKind ?? "azurite";

/** Starts a store server of `kind`. */
export async function startStoreServer(kind: StoreServerKind = storeKindForFile): Promise<StoreServer> {
  if (kind === "s3") return (await import("./moto")).startMoto();
  return (await import("./azurite")).startAzurite();
}

const fileStores = new Map<StoreServerKind, Promise<StoreServer>>();
const started = new Map<StoreServerKind, StoreServer>();

/**
 * The test file's store server of a kind, started when first needed and stopped when the file is done
 * (test/setup-store.ts). One server shared by a whole run held every file's objects: Azurite's garbage collection over
 * them, every 10 minutes, then kept its one thread busy for over a minute, in which no request was answered.
 */
export function sharedStoreServer(kind: StoreServerKind = storeKindForFile): Promise<StoreServer> {
  let server = fileStores.get(kind);
  if (!server) {
    server = startStoreServer(kind).then((made) => (started.set(kind, made), made));
    fileStores.set(kind, server);
  }
  return server;
}

/** The file's store server in a run on an object store (`QUIVER_TEST_STORE`), started before its tests. */
export function testStore(): StoreServer {
  const server = testStoreKind && started.get(testStoreKind);
  if (!server) throw new Error("QUIVER_TEST_STORE needs the test file's store server, which test/setup-store.ts starts");
  return server;
}

export async function stopSharedStoreServers(): Promise<void> {
  const servers = [...fileStores.values()];
  fileStores.clear();
  started.clear();
  await Promise.all(servers.map(async (server) => (await server).stop()));
}
