/**
 * A rolling upgrade: an instance of the previous release (b8c7ee3, the last before instances handed their catalog
 * rows to one committer and kept a write ledger), built from this repository's history, and an instance of this
 * build serve one root side by side under the storm of writes and the storm of catalog changes: every acknowledged
 * write is there once, every table catalogued once and listed by both. Then the old instance is replaced by a new
 * one, which takes the root as the old one left it.
 */
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "../client";
import { startServer, type TestServer } from "../server";
import { run, sourceCopy } from "../source-copy";
import { catalogStorm, checkStorm, createStormTable, runStorm } from "./storm";

const PREVIOUS = "b8c7ee3";

/**
 * The previous release, built once beside the system's temporary files from this repository's history; without
 * blocking the test worker (a build takes minutes; see source-copy.ts).
 */
async function previousRelease(): Promise<string> {
  const dir = path.join(os.tmpdir(), `quiver-previous-${PREVIOUS}`);
  if (existsSync(path.join(dir, ".next/BUILD_ID"))) return dir;
  await sourceCopy(dir, PREVIOUS);
  await run("node_modules/.bin/next build", { cwd: dir, maxBuffer: 64 * 2 ** 20 });
  return dir;
}

let old: TestServer;
let fresh: TestServer;
let next: TestServer | undefined;

beforeAll(async () => {
  const release = await previousRelease();
  // The root is the new instance's, so that stopping the old one leaves it.
  fresh = await startServer();
  old = await startServer({}, { root: fresh.root, cwd: release });
}, 600_000);
afterAll(async () => {
  await Promise.all([old?.stop(), fresh?.stop(), next?.stop()]);
});

describe(`an instance of the previous release (${PREVIOUS}) beside one of this build on one root`, () => {
  it("takes writes through both: every acknowledged write there once", async () => {
    const apis = [client(old.url, old.auth), client(fresh.url, fresh.auth)];
    await createStormTable(apis[1], "storm$t");
    const result = await runStorm(apis, "storm$t");
    await checkStorm(apis[0], "storm$t", result);
    await checkStorm(apis[1], "storm$t", result);
  });

  it("takes catalog changes through both: each table catalogued once, read back at once, listed by both", () =>
    catalogStorm([client(old.url, old.auth), client(fresh.url, fresh.auth)], "cat"));

  it("is replaced by an instance of this build, which serves what the old one wrote", async () => {
    await old.stop();
    next = await startServer({}, { root: fresh.root });
    const api = client(next.url, next.auth);
    const listed = await api.get<{ tables: string[] }>("/v1/namespace/cat/table/list?limit=1000");
    expect(listed.status).toBe(200);
    expect(listed.body.tables.length).toBe(8 * 25);
    const counted = await api.post<number>("/v1/table/storm$t/count_rows", {});
    expect(counted.status).toBe(200);
    expect((await client(fresh.url, fresh.auth).post<number>("/v1/table/storm$t/count_rows", {})).body).toBe(counted.body);
    expect((await api.post("/v1/table/cat$late/declare", {})).status).toBe(200);
    expect((await client(fresh.url, fresh.auth).post("/v1/table/cat$late/describe", {})).status).toBe(200);
  });
});
