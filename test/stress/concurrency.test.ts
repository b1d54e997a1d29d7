import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client } from "../client";
import { startServer, storeOf, type TestServer } from "../server";
import { catalogStorm, checkStorm, createStormTable, runStorm } from "./storm";
import { dropRacingInsert, names, sameColumnAlterations, twoAlterations, twoCreates, twoDeclares, twoOverwrites } from "./conflicts";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  expect((await api.post("/v1/namespace/c/create", {})).status).toBe(200);
});
afterAll(() => server?.stop());

describe("one server, many clients", () => {
  it("16 inserting clients, 4 merging and 2 reading: every acknowledged row once, honest increasing versions", async () => {
    await createStormTable(api, "storm$t");
    const result = await runStorm([api], "storm$t");
    console.log(`storm on one server: ${result.writes.length} writes in ${result.seconds}s`);
    await checkStorm(api, "storm$t", result);
    expect(server.output()).not.toMatch(/engine failure/);
  });
  it("8 clients declaring and creating 200 tables: each catalogued once, read back at once, listed by every server", () => catalogStorm([api], "cat"));
});

describe("one server, two conflicting requests at once", () => {
  it("two overwrites: one wins, the table holds exactly the last acknowledged data", async () => {
    const outcomes = await twoOverwrites(api, api, "c$ow");
    console.log(`twoOverwrites outcomes (ok or error code): ${outcomes.join(" ")}`);
  });
  it("two alterations of different columns: each lands or answers 409, and the schema says which", async () => {
    const outcomes = await twoAlterations(api, api, "c$alt");
    console.log(`twoAlterations outcomes (ok or error code): ${outcomes.join(" ")}`);
  });
  it("two alterations of the same column: exactly one lands", async () => {
    const outcomes = await sameColumnAlterations(api, api, "c$same");
    console.log(`sameColumnAlterations outcomes (ok or error code): ${outcomes.join(" ")}`);
  });
  it("two declares of one table: one declares it, the other is told it exists", () => twoDeclares(api, api, storeOf(server), names("c$decl", "rootdecl")));
  it("two creates of one table: one creates it with its rows", () => twoCreates(api, api, storeOf(server), names("c$create", "rootcreate")));
  it("a drop racing an insert: nothing is left behind, and the name can be used again", async () => {
    const outcomes = await dropRacingInsert(api, api, storeOf(server), ["c$dropped", "rootdropped"]);
    console.log(`insert outcomes against the drop (ok or error code): ${outcomes.join(" ")}`);
  });
});
