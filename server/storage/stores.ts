/** The store of the data root, opened once per process, and the stores of roots inside it (databases). */
import "server-only";
import { config } from "../config";
import { LocalStore } from "./local-store";
import type { ObjectStore } from "./object-store";
import { ObjectStoreClient } from "./cloud-store";
import { countedStore } from "./counted-store";
import type { DataRoot } from "./root";

export function openStore(root: DataRoot, storageOptions: Record<string, string>): ObjectStore {
  return countedStore(root.kind === "local" ? new LocalStore(root) : new ObjectStoreClient(root, storageOptions));
}

const prepared = new Map<string, Promise<void>>();

/**
 * Readies a root's store once per process, however many stores are opened on it (the server's start and the default
 * database's both open the root's): its container, its first listing, a local root's trash.
 */
export function prepareStore(store: ObjectStore): Promise<void> {
  const uri = store.root.uri;
  let ready = prepared.get(uri);
  if (!ready) {
    ready = store.prepare();
    prepared.set(uri, ready);
    ready.catch(() => prepared.delete(uri));
  }
  return ready;
}

let store: ObjectStore | undefined;

export function rootStore(): ObjectStore {
  store ??= openStore(config.root, config.storageOptions);
  return store;
}
