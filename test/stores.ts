/** The kinds of data-root store that tests run against, each making a fresh, empty store. */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { LocalStore } from "@/server/storage/local-store";
import type { ObjectStore } from "@/server/storage/object-store";
import { parseRoot } from "@/server/storage/root";
import { openStore } from "@/server/storage/stores";
import { sharedStoreServer, STORE_NAMES, type StoreServerKind } from "./store-server";

export interface StoreKind {
  name: string;
  make: () => Promise<ObjectStore>;
}

function onServer(kind: StoreServerKind): StoreKind {
  return {
    name: STORE_NAMES[kind],
    make: async () => {
      const server = await sharedStoreServer(kind);
      const { uri } = await server.newRoot();
      return openStore(parseRoot(uri), server.storageOptions);
    },
  };
}

export function storeKinds(): StoreKind[] {
  return [
    {
      name: "local",
      make: async () => new LocalStore({ kind: "local", uri: mkdtempSync(path.join(os.tmpdir(), "quiver-store-")) }),
    },
    onServer("azurite"),
    onServer("s3"),
  ];
}
