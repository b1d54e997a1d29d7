/** Each test file gets an Azurite of its own where it needs one (see sharedAzurite), stopped when the file is done. */
import { afterAll, beforeAll } from "vitest";
import { sharedAzurite, stopSharedAzurite } from "./azurite";

// Registered before the file's own hooks: started before its servers, stopped after them.
if (process.env.QUIVER_TEST_STORE === "azurite")
  beforeAll(async () => {
    await sharedAzurite();
  });
afterAll(stopSharedAzurite);
