/**
 * Checks that the build the tests run exists and, when the suites run on an object store
 * (`QUIVER_TEST_STORE=azurite`), starts the one Azurite they share; each server then gets a container of its own.
 */
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startAzurite } from "./azurite";

declare module "vitest" {
  export interface ProvidedContext {
    azuriteEndpoint: string | null;
  }
}

export default async function setup(project: TestProject) {
  if (!existsSync(".next/BUILD_ID")) {
    throw new Error("integration tests run the production build: run `npm run build` first (npm test does)");
  }
  if (process.env.QUIVER_TEST_STORE !== "azurite") {
    project.provide("azuriteEndpoint", null);
    return;
  }
  const azurite = await startAzurite();
  project.provide("azuriteEndpoint", azurite.endpoint);
  return () => azurite.stop();
}
