/**
 * Starts the real built server on a free port against a fresh temporary data root, or against an existing root
 * (another instance's, or one left by a killed server), which it then leaves in place when it stops.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { testStore, testStoreKind } from "./store-server";
import { snapshot } from "./hostile";
import type { ObjectStore } from "@/server/storage/object-store";
import { childUri, parseRoot, relativeTo } from "@/server/storage/root";
import { openStore } from "@/server/storage/stores";
import { freePort } from "./oidc";
import { runningServers } from "./running-servers";
import os from "node:os";
import path from "node:path";

export interface TestServer {
  url: string;
  root: string;
  /** The admin key the server was started with, and the headers that present it. */
  adminKey: string;
  auth: Record<string, string>;
  /** The server's process id, to read its memory use. */
  pid: number;
  output: () => string;
  stop: () => Promise<void>;
  /** Ends the process with SIGKILL, as a crash would: nothing gets to finish or clean up. */
  kill: () => Promise<void>;
}

export const TEST_ADMIN_KEY = "test-admin-key-0123456789";
/** How long a stopped server may take to finish its open requests and connections before it is killed. */
const STOP_GRACE_MS = 30_000;

/** True when this run's servers keep their data root on an object store (`QUIVER_TEST_STORE`), not a local directory. */
export const onObjectStore = testStoreKind !== undefined;

/** Whether a process is stopped (SIGSTOP: its state in /proc is T). */
export const isStopped = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("T") ?? false;

/** A fresh data root of this run's kind: a temporary directory, or a new container (bucket) on the test file's store server. */
async function freshRoot(): Promise<{ root: string; env: Record<string, string> }> {
  if (!onObjectStore) {
    const root = mkdtempSync(path.join(os.tmpdir(), "quiver-test-"));
    return { root, env: { QUIVER_ROOT: root } };
  }
  const { uri, env } = await testStore().newRoot();
  return { root: uri, env };
}

/** The environment that points a server at an existing root of this run's kind. */
export function rootEnv(root: string): Record<string, string> {
  if (!onObjectStore) return { QUIVER_ROOT: root };
  return { QUIVER_ROOT: root, QUIVER_STORAGE_OPTIONS: JSON.stringify(testStore().storageOptions) };
}

/** The store of a server's data root, to look at what the server wrote wherever the root is. */
export function storeOf(server: TestServer): ObjectStore {
  return openStore(parseRoot(server.root), onObjectStore ? testStore().storageOptions : {});
}

/**
 * What a server keeps of the calls it answered and of its instances, rather than of the data: the audit log, which
 * records even refused calls by design, the write ledger, whose records of earlier writes change on their own time
 * (an answered insert's marker goes once its answer is out; a refused write leaves no record there,
 * test/api-idempotency.test.ts), the notes of tables written, flushed a few seconds after a write, and the
 * maintainer's lease, claimed slot after slot, and the roster's record of each server process, written again now and then.
 */
export const BOOKKEEPING = [
  ".quiver/auth/audit/",
  ".quiver/requests/",
  ".quiver/written/",
  ".quiver/maintainer/",
  ".quiver/catalog/committer/",
  ".quiver/instances/",
] as const;

/**
 * Every entry under a server's root but the subtrees in `skip` (key prefixes ending in `/`), with what changes when
 * it is written: on a local root each file's content digest (and every directory and link), on an object store each
 * object's ETag and time. By default all but the server's bookkeeping.
 */
export async function rootSnapshot(server: TestServer, skip: readonly string[] = BOOKKEEPING): Promise<Map<string, string>> {
  const root = parseRoot(server.root);
  if (root.kind === "local")
    return snapshot(
      root.uri,
      skip.map((prefix) => prefix.replace(/\/$/, "")),
    );
  const listed = await storeOf(server).listInfo("");
  // With the time it was written: S3's ETag is the content's digest, which an object written again alike keeps.
  const kept = [...listed]
    .filter(([key]) => !skip.some((prefix) => key.startsWith(prefix)))
    .map(([key, info]) => [key, `${info.etag} ${info.modified}`] as const);
  return new Map(kept);
}

/** The URI (or, on a local root, the path) of a key below the server's root. */
export function uriOf(server: TestServer, key: string): string {
  return childUri(parseRoot(server.root), key);
}

/** The key below the server's root of a location or path the server reported. */
export function keyOf(server: TestServer, location: string): string {
  const key = relativeTo(parseRoot(server.root), location);
  if (key === null) throw new Error(`${location} is not below ${server.root}`);
  return key;
}

/**
 * A place beside a server's root (a sibling directory, or a sibling prefix in the same container): its URI, where
 * it is as a location relative to the root, the storage options that open it, and what is stored there now.
 */
export interface BesideRoot {
  uri: string;
  relative: string;
  storageOptions: Record<string, string>;
  state: () => Promise<Map<string, string>>;
  /** Deletes it; a prefix on an object store goes with the test file's in-memory store server. */
  remove: () => void;
}

export function besideRoot(server: TestServer, name: string): BesideRoot {
  const root = parseRoot(server.root);
  if (root.kind === "local") {
    const uri = path.join(path.dirname(root.uri), name);
    mkdirSync(uri, { recursive: true });
    return { uri, relative: `../${name}`, storageOptions: {}, state: async () => snapshot(uri), remove: () => rmSync(uri, { recursive: true, force: true }) };
  }
  const uri = server.root.replace(/[^/]+$/, name);
  const storageOptions = testStore().storageOptions;
  const store = openStore(parseRoot(uri), storageOptions);
  const state = async () => new Map([...(await store.listInfo(""))].map(([key, info]) => [key, info.etag] as const));
  return { uri, relative: `../${name}`, storageOptions, state, remove: () => {} };
}

/**
 * Starts the built server on a fresh root (or on `root`): Next's own `next start`, or with `workers`, `npm start`'s
 * script, which runs that many processes on one port; the build in `cwd` (another release's) when given.
 */
export async function startServer(
  env: Record<string, string> = {},
  options: {
    port?: number;
    root?: string;
    workers?: number;
    cwd?: string;
    /** The largest file the server may write, as a full disk stops it (its writes fail with EFBIG). */
    fileSizeLimitKiB?: number;
  } = {},
): Promise<TestServer> {
  const fresh = options.root === undefined ? await freshRoot() : { root: options.root, env: rootEnv(options.root) };
  const root = fresh.root;
  const adminKey = env.QUIVER_ADMIN_API_KEY ?? TEST_ADMIN_KEY;
  const port = options.port ?? (await freePort());
  let log = "";
  const [command, args] =
    options.workers === undefined
      ? ["node_modules/.bin/next", ["start", "-p", String(port), "-H", "127.0.0.1"]]
      : [process.execPath, ["scripts/start.mjs", "-H", "127.0.0.1"]];
  const cacheHome = mkdtempSync(path.join(os.tmpdir(), "quiver-test-cache-"));
  const limited: [string, string[]] =
    options.fileSizeLimitKiB === undefined ? [command, args] : ["bash", ["-c", `ulimit -f ${options.fileSizeLimitKiB}; exec "$0" "$@"`, command, ...args]];
  const child: ChildProcess = spawn(limited[0], limited[1], {
    cwd: options.cwd,
    env: {
      ...process.env,
      ...fresh.env,
      NODE_ENV: "production",
      QUIVER_ADMIN_API_KEY: adminKey,
      NEXTAUTH_URL: `http://127.0.0.1:${port}`,
      PORT: String(port),
      // Background compaction would change the versions and fragments tests count; the policy's own tests turn it on.
      QUIVER_MAINTENANCE: "off",
      ...(options.workers === undefined ? {} : { QUIVER_WORKERS: String(options.workers) }),
      // The read cache's default directory (on an object-store root) in one of the test's own, gone when it stops.
      XDG_CACHE_HOME: cacheHome,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const exited = new Promise((r) => child.once("exit", r));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${log}`);
    try {
      const res = await fetch(`${url}/v1/openapi.json`);
      if (res.status === 401 || res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const server: TestServer = {
    url,
    root,
    adminKey,
    auth: adminKey ? { "x-api-key": adminKey } : {},
    pid: child.pid!,
    output: () => log,
    stop: async () => {
      runningServers.delete(server);
      child.kill("SIGTERM");
      // Next's graceful stop waits for open connections; a busy machine once kept one open past the hook's time.
      const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), STOP_GRACE_MS))]);
      if (!stopped) {
        console.warn(`server on ${url} did not stop within ${STOP_GRACE_MS} ms of SIGTERM; killed`);
        child.kill("SIGKILL");
        await exited;
      }
      if (!options.root && !onObjectStore) rmSync(root, { recursive: true, force: true });
      rmSync(cacheHome, { recursive: true, force: true });
    },
    kill: async () => {
      runningServers.delete(server);
      child.kill("SIGKILL");
      await exited;
    },
  };
  runningServers.add(server);
  return server;
}
