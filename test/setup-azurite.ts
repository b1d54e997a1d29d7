/** In a run of the suites on an object store, each test file gets an Azurite of its own (see testAzurite). */
import { afterAll, beforeAll } from "vitest";
import { startTestAzurite, stopTestAzurite } from "./azurite";

if (process.env.QUIVER_TEST_STORE === "azurite") {
  // Registered before the file's own hooks: started before its servers, stopped after them.
  beforeAll(startTestAzurite);
  afterAll(stopTestAzurite);
}
