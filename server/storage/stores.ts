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

let store: ObjectStore | undefined;

export function rootStore(): ObjectStore {
  store ??= openStore(config.root, config.storageOptions);
  return store;
}
