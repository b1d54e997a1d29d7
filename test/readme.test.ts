/** The README's walk-through is run as written, against the real server. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startServer, type TestServer } from "./server";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

it("runs the README walk-through and gets the values it describes", () => {
  const readme = readFileSync("README.md", "utf8");
  const script = /<!-- walkthrough -->\s*```bash\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(script).toBeDefined();
  const output = execFileSync("bash", ["-euo", "pipefail", "-O", "expand_aliases", "-c", script!], {
    env: { ...process.env, BASE: server.url, QUIVER_KEY: server.adminKey },
    encoding: "utf8",
  });
  const lines = output
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({ properties: { owner: "data-team" } });
  expect(lines[1]).toMatchObject({ properties: { tier: "gold" }, managed_versioning: false });
  expect(lines[2]).toMatchObject({ version: 1, num_inserted_rows: 5 });
  expect(lines[3]).toMatchObject({ version: 2, num_inserted_rows: 5 });
  expect(lines[4]).toMatchObject({ version: 3, num_updated_rows: 2, num_inserted_rows: 3, num_deleted_rows: 0 });
  expect(lines[5]).toBe(5);
  expect(lines[6].versions.map((v: { version: number }) => v.version)).toEqual([3, 2]);
  expect(lines[9]).toMatchObject({ version: 3 });
  expect(lines[10].tables).toEqual(["shop$items"]);
});
