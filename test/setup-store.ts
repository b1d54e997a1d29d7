/** Each test file gets store servers of its own where it needs them (see sharedStoreServer), stopped when it is done. */
import { afterAll, beforeAll } from "vitest";
import { sharedStoreServer, stopSharedStoreServers, testStoreKind } from "./store-server";

// Registered before the file's own hooks: started before its servers, stopped after them.
if (testStoreKind)
  beforeAll(async () => {
    await sharedStoreServer(testStoreKind);
  });
afterAll(stopSharedStoreServers);
