/** Checks that the build the tests run exists. */
import { existsSync } from "node:fs";

export default function setup() {
  if (!existsSync(".next/BUILD_ID")) {
    throw new Error("integration tests run the production build: run `npm run build` first (npm test does)");
  }
}
