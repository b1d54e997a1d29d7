/**
 * Hostile input against the real server: a corpus of hand-written nasty requests, then property-based fuzzing of
 * identifiers, delimiters, query parameters, JSON bodies, Arrow streams, headers and `context` entries. For every
 * request: no 5xx, every error in the documented shape, no response header the server did not mean to send, and
 * a failed request leaves the data root exactly as it was.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Binary,
  Bool,
  Dictionary,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  List,
  Null,
  Schema,
  Struct,
  Table,
  TimestampMillisecond,
  Uint64,
  Utf8,
  tableToIPC,
  vectorFromArray,
  type DataType,
} from "apache-arrow";
import * as flatbuffers from "flatbuffers";
import { Message as FbMessage } from "apache-arrow/fb/message";
import { RecordBatch as FbRecordBatch } from "apache-arrow/fb/record-batch";
import { apiRoutes } from "@/app/v1/_routes";
import type { RouteDef } from "@/server/http/route";
import { transactionOperation } from "@/server/lance/version-operations";
import { client, rows } from "./client";
import { besideRoot, rootSnapshot, startServer, storeOf, type BesideRoot, type TestServer } from "./server";
import { changes, contractProblem, send, snapshot, type RawReply, type RawRequest } from "./hostile";

let server: TestServer;
let api: ReturnType<typeof client>;
/** A directory beside the data root that fuzzed paths aim at; nothing may ever reach it. */
const canary = mkdtempSync(path.join(os.tmpdir(), "quiver-canary-"));
writeFileSync(path.join(canary, "keep.txt"), "outside the data root");
const canaryBefore = snapshot(canary);
/** Beside the root, a real Lance dataset: a register, drop or deregister that reached it would succeed. */
let beside: BesideRoot;
let besideBefore: Map<string, string>;

/*
 * The audit log gains a line for every mutating or refused call whatever its outcome (dispatch in
 * server/http/dispatch.ts, server/auth/audit.ts): a failed call is meant to leave that record, and nothing else, so
 * rootSnapshot leaves it out. Grants and key records change only when a call succeeds, so they are checked like
 * everything else.
 */

/**
 * Every hundredth catalog write starts a compaction of `__manifest` beside the requests (server/catalog/catalog-table.ts), whose
 * files and commits may land while any later request runs. They are told from a request's own catalog writes by the
 * operations their transaction files name: compaction reserves, rewrites and re-indexes, which no request does.
 */
const COMPACTION = ["ReserveFragments", "Rewrite", "CreateIndex"];
const operationOf = async (created: string) => {
  const content = await storeOf(server).get(created.slice("created ".length));
  return content ? transactionOperation(content) : null;
};

async function backgroundCompaction(changed: string[]): Promise<boolean> {
  const requestOwn = async (c: string) =>
    !/ __manifest\//.test(c) || (c.startsWith("created ") && c.endsWith(".txn") && !COMPACTION.includes((await operationOf(c)) ?? ""));
  return !(await Promise.all(changed.map(requestOwn))).some(Boolean);
}

/** A fixed seed, so that a failure found once is found again; enough runs per property to matter, few enough to be quick. */
const SEED = 20261122;
const RUNS = 150;

const show = (req: RawRequest) => {
  const body = req.body === undefined ? "" : typeof req.body === "string" ? ` ${JSON.stringify(req.body.slice(0, 300))}` : ` <${req.body.length} bytes>`;
  const headers = Object.entries(req.headers ?? {}).filter(([k]) => k !== "x-api-key");
  return `${req.method} ${JSON.stringify(req.path)}${headers.length ? ` ${JSON.stringify(Object.fromEntries(headers))}` : ""}${body}`;
};

/** Sends one request; answers the reply and how it broke the contract, if it did. */
async function check(req: RawRequest): Promise<{ reply: RawReply; problem: string | null }> {
  const before = await rootSnapshot(server);
  const reply = await send(server.url, req).catch((err) => {
    throw new Error(`${show(req)}\n  -> ${err}; the server's last words:\n${server.output().slice(-4000)}`);
  });
  const problem = contractProblem(req, reply);
  if (problem) {
    const log = reply.status >= 500 ? `\n  the server's log ends:\n${server.output().slice(-6000)}` : "";
    return { reply, problem: `${show(req)}\n  -> ${problem}${log}` };
  }
  if (reply.status >= 400) {
    const changed = changes(before, await rootSnapshot(server));
    if (changed.length && !(await backgroundCompaction(changed))) {
      const named = await Promise.all(
        changed.slice(0, 20).map(async (c) => (c.endsWith(".txn") && c.startsWith("created ") ? `${c} (${await operationOf(c)})` : c)),
      );
      return { reply, problem: `${show(req)}\n  -> ${reply.status} ${reply.text.slice(0, 200)}\n  but changed the data root:\n    ${named.join("\n    ")}` };
    }
  }
  return { reply, problem: null };
}

async function hostile(req: RawRequest): Promise<RawReply> {
  const { reply, problem } = await check(req);
  if (problem) throw new Error(problem);
  return reply;
}

const authed = (headers: Record<string, string> = {}) => ({ "x-api-key": server.adminKey, ...headers });
const jsonRequest = (method: string, p: string, body: unknown, headers: Record<string, string> = {}): RawRequest => ({
  method,
  path: p,
  headers: authed({ "content-type": "application/json", ...headers }),
  body: body === undefined ? undefined : JSON.stringify(body),
});
const arrowRequest = (p: string, body: Uint8Array, headers: Record<string, string> = {}): RawRequest => ({
  method: "POST",
  path: p,
  headers: authed({ "content-type": "application/vnd.apache.arrow.stream", ...headers }),
  body,
});

const stream = (table: Table) => tableToIPC(table, "stream");
const VALID = stream(rows(0, 3));

let fresh = 0;
/** A name no earlier request used, so a create or declare really creates. */
const freshName = (prefix: string) => `${prefix}${++fresh}`;

/** Objects the fuzzing must not drop or rename: every property needs them to hit existing objects. */
const FIXTURES = new Set(["ns", "ns$inner", "t", "ns$t", "ns$scratch", "ns$declared"]);

beforeAll(async () => {
  server = await startServer();
  beside = besideRoot(server, `beside-${path.basename(canary)}`);
  await (await lancedb.connect(beside.uri, { storageOptions: beside.storageOptions })).createTable("victim", [{ id: 1, s: "outside" }]);
  besideBefore = await beside.state();
  api = client(server.url, server.auth);
  const ok = (reply: { status: number; body: unknown }) => expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  ok(await api.post("/v1/namespace/ns/create", { properties: { owner: "fuzz" } }));
  ok(await api.post("/v1/namespace/ns$inner/create", {}));
  ok(await api.arrow("/v1/table/t/create", rows(0, 5)));
  ok(await api.arrow("/v1/table/ns$t/create", rows(0, 5)));
  ok(await api.arrow("/v1/table/ns$t/insert", rows(5, 10)));
  ok(await api.post("/v1/table/ns$t/tags/create", { tag: "v1", version: 1 }));
  ok(await api.post("/v1/table/ns$t/branches/create", { name: "b1" }));
  ok(await api.arrow("/v1/table/ns$scratch/create", rows(0, 5)));
  ok(await api.post("/v1/table/ns$declared/declare", {}));
});
afterAll(async () => {
  await server?.stop();
  rmSync(canary, { recursive: true, force: true });
  beside?.remove();
});

// ---------------------------------------------------------------- building blocks

const NASTY = [
  "..",
  ".",
  "/",
  "\\",
  "%2e",
  "%2E%2e",
  "%2f",
  "%5c",
  "..%2f",
  "%00",
  "\u0000",
  "\u2024",
  "\uff0e",
  "\u2215",
  "\uff0f",
  "$",
  "%24",
  "ns",
  "t",
  "inner",
  "scratch",
  "declared",
  "x.lance",
  "__manifest",
  ".quiver",
  "~",
  " ",
  "\t",
  "\r\n",
  "?",
  "#",
  "%",
  "%%",
  "%C0%AE",
  "%E2%80%AE",
  "a".repeat(129),
  "é",
  "😀",
  "'",
  '"',
  ";",
  "*",
  "\ufeff",
  "\u202e",
];

/** Fragments that aim at the canary directory beside the data root. */
const ESCAPES = [`../${path.basename(canary)}`, canary, `..%2f${path.basename(canary)}`, `%2e%2e%2f${path.basename(canary)}`];

const fragment = () =>
  fc.oneof(fc.constantFrom(...NASTY, ...ESCAPES), fc.string({ unit: "grapheme", maxLength: 6 }), fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/));
const nastyString = () => fc.array(fragment(), { maxLength: 5 }).map((parts) => parts.join(""));

/**
 * A path segment sent as written: only what cannot appear in an HTTP request line at all is escaped (Node's HTTP
 * parser answers such a line with a bare 400 before any of the server's code runs).
 */
const asWritten = (s: string) => [...s].map((c) => (/^[\u0021-\u007e]$/.test(c) ? c : encodeURIComponent(c))).join("");
const segment = (s: string, raw: boolean) => (raw ? asWritten(s) : encodeURIComponent(s));

/** Lone surrogates cannot be percent-encoded at all, so no client could send them. */
function wellFormed(s: string): boolean {
  try {
    encodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
}

function decodesTo(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}

const jsonValue = () =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    nastyString(),
    fc.constantFrom(-1, 0, 1.5, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER, "", null, true, [], {}, [""], { "": "" }),
  );

// ---------------------------------------------------------------- corpus

const deep = (n: number) => "[".repeat(n) + "]".repeat(n);

function corpus(): RawRequest[] {
  const c = path.basename(canary);
  return [
    // paths Next.js itself cannot decode
    { method: "POST", path: "/v1/table/%/describe", headers: authed() },
    { method: "POST", path: "/v1/table/%C0%AE%C0%AE/describe", headers: authed() },
    { method: "GET", path: "/v1/namespace/%E2%82/list", headers: authed() },
    { method: "GET", path: "/v1/%", headers: authed() },
    { method: "POST", path: "/v1/admin/keys/%ff/revoke", headers: authed({ "content-type": "application/json" }), body: "{}" },
    { method: "GET", path: "/v1/table/../../../etc/passwd", headers: authed() },
    { method: "GET", path: "/v1/table/%", headers: authed({ "x-middleware-subrequest": "proxy:proxy:proxy:proxy:proxy" }) },
    { method: "GET", path: `/v1/namespace/..%2f..%2f${c}/list`, headers: authed() },
    { method: "POST", path: `/v1/table/${encodeURIComponent(canary)}/describe`, headers: authed() },
    { method: "GET", path: "/v1//table", headers: authed() },
    { method: "GET", path: "/v1/table?limit=%", headers: authed() },
    { method: "GET", path: "/v1/table?delimiter=%&delimiter=$", headers: authed() },
    // headers
    { method: "GET", path: "/v1/whoami", headers: { cookie: "a=%" } },
    { method: "GET", path: "/v1/whoami", headers: { cookie: "next-auth.session-token=%E0%A4%A" } },
    { method: "GET", path: "/v1/whoami", headers: { cookie: "__Secure-next-auth.session-token=not-a-jwt" } },
    { method: "GET", path: "/v1/whoami", headers: { authorization: "Bearer" } },
    { method: "GET", path: "/v1/whoami", headers: { authorization: "Bearer qvr_0123456789abcdef_" + "A".repeat(43) } },
    { method: "GET", path: "/v1/whoami", headers: { authorization: "Bearer a.b.c" } },
    { method: "GET", path: "/v1/whoami", headers: authed({ "x-quiver-database": "../../etc" }) },
    { method: "GET", path: "/v1/whoami", headers: authed({ "x-lancedb-database": `..%2f${c}` }) },
    { method: "GET", path: "/v1/namespace/%24/list", headers: authed({ "x-quiver-database": "nope" }) },
    { method: "GET", path: "/v1/namespace/%24/list", headers: authed({ "x-quiver-database": "a".repeat(65) }) },
    { method: "GET", path: "/v1/whoami", headers: authed({ "x-request-id": "x".repeat(500) }) },
    { method: "GET", path: "/v1/whoami", headers: authed({ host: "exa mple" }) },
    // JSON bodies
    jsonRequest("POST", "/v1/namespace/ns/describe", undefined, { "content-type": "text/plain" }),
    { method: "POST", path: "/v1/namespace/ns/describe", headers: authed({ "content-type": "application/json" }), body: "{" },
    { method: "POST", path: "/v1/namespace/ns/describe", headers: authed({ "content-type": "application/json" }), body: deep(100_000) },
    { method: "POST", path: "/v1/namespace/ns/describe", headers: authed({ "content-type": "application/json" }), body: `{"context":${deep(5000)}}` },
    { method: "POST", path: "/v1/namespace/ns/describe", headers: authed({ "content-type": "application/json" }), body: "\u00ff\u00fe" },
    { method: "POST", path: "/v1/namespace/ns/describe", headers: authed({ "content-type": "application/json" }), body: new Uint8Array([0xc0, 0xae, 0xff]) },
    jsonRequest("POST", "/v1/table/ns$t/query", { limit: 1e308 }),
    jsonRequest("POST", "/v1/table/ns$t/query", { k: 1e308, vector: [1e308] }),
    jsonRequest("POST", "/v1/table/ns$t/query", { offset: Number.MAX_SAFE_INTEGER }),
    jsonRequest("POST", "/v1/table/ns$t/query", { version: Number.MAX_SAFE_INTEGER }),
    jsonRequest("POST", "/v1/table/ns$t/query", { nprobes: Number.MAX_SAFE_INTEGER, vector: [1, 2] }),
    jsonRequest("POST", "/v1/table/ns$t/query", { distance_type: "bogus", vector: [1, 2] }),
    jsonRequest("POST", "/v1/table/ns$t/query", { filter: "id = ", columns: ["`"] }),
    jsonRequest("POST", "/v1/table/ns$t/query", { columns: { column_aliases: { a: "id +" } } }),
    jsonRequest("POST", "/v1/table/ns$t/count_rows", { predicate: "'" }),
    jsonRequest("POST", "/v1/table/ns$t/describe", { tag: "../../x" }),
    jsonRequest("POST", "/v1/table/ns$t/describe", { branch: "../../x" }),
    jsonRequest("POST", "/v1/table/ns$t/describe", { id: ["ns", ".."] }),
    jsonRequest("POST", "/v1/table/ns$scratch/drop_columns", { columns: ["a..b"] }),
    jsonRequest("POST", "/v1/table/ns$scratch/drop_columns", { columns: ["`"] }),
    jsonRequest("POST", "/v1/table/ns$scratch/create_index", { column: "`", index_type: "BTREE" }),
    jsonRequest("POST", "/v1/table/ns$scratch/create_index", { column: "s", index_type: "IVF_PQ" }),
    jsonRequest("POST", "/v1/table/ns$scratch/alter_columns", { alterations: [{ path: "id", data_type: { type: "nope" } }] }),
    jsonRequest("POST", "/v1/table/ns$scratch/alter_columns", { alterations: [{ path: "id", rename: "" }] }),
    jsonRequest("POST", "/v1/table/ns$scratch/add_columns", { new_columns: [{ name: "id", expression: "1" }] }),
    jsonRequest("POST", "/v1/table/ns$scratch/update", { updates: [["nope", "1"]] }),
    jsonRequest("POST", "/v1/table/ns$scratch/restore", { version: 99 }),
    jsonRequest("POST", "/v1/table/ns$t/tags/create", { tag: "../../../x", version: 1 }),
    jsonRequest("POST", "/v1/table/ns$t/tags/create", { tag: "a/b", version: 1 }),
    jsonRequest("POST", "/v1/table/ns$t/tags/create", { tag: "v1", version: 1 }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: `../../${c}` }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "/abs" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "a\\b" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "x y" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "." }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "a/./b" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "a//b" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "main" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "b1" }),
    jsonRequest("POST", "/v1/table/ns$t/branches/create", { name: "b9", from_branch: "../x" }),
    jsonRequest("POST", "/v1/table/ns$t/declare", { location: "/etc" }),
    jsonRequest("POST", `/v1/table/ns$${freshName("loc")}/declare`, { location: `../${c}` }),
    jsonRequest("POST", `/v1/table/ns$${freshName("loc")}/declare`, { location: canary }),
    jsonRequest("POST", `/v1/table/${freshName("loc")}/declare`, { location: "t.lance" }),
    jsonRequest("POST", `/v1/table/${freshName("loc")}/declare`, { location: "__manifest" }),
    jsonRequest("POST", `/v1/table/${freshName("loc")}/declare`, { location: ".quiver/links" }),
    jsonRequest("POST", `/v1/table/ns$${freshName("loc")}/declare`, { location: "deadbeef_ns$t/../.." }),
    jsonRequest("POST", "/v1/table/ns$ghost/rename", { new_table_name: "..", new_namespace_id: [".."] }),
    jsonRequest("POST", "/v1/admin/databases/create", { name: "../x" }),
    jsonRequest("POST", "/v1/admin/keys/create", { name: "k", role: "viewer", scope: { database: "../x" } }),
    jsonRequest("POST", "/v1/admin/keys/create", { name: "k", role: "viewer", expires_at: "2000-01-01T00:00:00Z" }),
    jsonRequest("POST", "/v1/admin/grants/create", { principal: { type: "user", name: "u" }, role: "viewer", scope: { id: [".."] } }),
    // Arrow bodies
    arrowRequest("/v1/table/ns$scratch/insert", new Uint8Array()),
    arrowRequest("/v1/table/ns$scratch/insert", new TextEncoder().encode("ARROW1")),
    arrowRequest("/v1/table/ns$scratch/insert", new TextEncoder().encode("ARROW1\0\0garbageARROW1")),
    arrowRequest("/v1/table/ns$scratch/insert", VALID.subarray(0, VALID.length - 9)),
    arrowRequest("/v1/table/ns$scratch/insert", new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])),
    arrowRequest("/v1/table/ns$scratch/insert", tableToIPC(rows(0, 3), "file").subarray(0, 40)),
    arrowRequest(`/v1/table/ns$${freshName("a")}/create`, stream(new Table({ "": vectorFromArray([1, 2], new Int32()) }))),
    arrowRequest(`/v1/table/ns$${freshName("a")}/create`, stream(new Table({ "a.b": vectorFromArray([1, 2], new Int32()) }))),
    arrowRequest(`/v1/table/ns$${freshName("a")}/create`, stream(new Table({ n: vectorFromArray([null, null], new Null()) }))),
    arrowRequest(`/v1/table/ns$${freshName("a")}/create`, stream(new Table(new Schema([])))),
    arrowRequest("/v1/table/ns$declared/insert", stream(new Table({ "": vectorFromArray([1, 2], new Int32()) }))),
    arrowRequest("/v1/table/ns$scratch/insert", stream(new Table({ id: vectorFromArray(["a"], new Utf8()) }))),
    arrowRequest("/v1/table/ns$scratch/merge_insert?on=id&when_matched_update_all=true", stream(new Table({ nope: vectorFromArray([1], new Int32()) }))),
    arrowRequest("/v1/table/ns$scratch/merge_insert?on=`&when_matched_update_all=true", VALID),
    arrowRequest("/v1/table/ns$scratch/merge_insert?on=id&when_matched_update_all_filt=)(&when_not_matched_insert_all=true", VALID),
    arrowRequest("/v1/table/ns$scratch/insert?branch=../../x", VALID),
    arrowRequest("/v1/tables/..", VALID),
  ];
}

describe("hostile corpus", () => {
  it("keeps the contract for every hand-written case", async () => {
    const problems: string[] = [];
    for (const req of corpus()) {
      const { problem } = await check(req);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });
});

// ---------------------------------------------------------------- properties

const ID_OPS: Array<{ method: string; path: string; body?: "json" | "arrow"; protect?: boolean; json?: (raw: string) => unknown }> = [
  { method: "GET", path: "/v1/namespace/{id}/list" },
  { method: "GET", path: "/v1/namespace/{id}/table/list" },
  { method: "GET", path: "/v1/namespace/{id}/entries" },
  { method: "GET", path: "/v1/namespace/{id}/describe" },
  { method: "POST", path: "/v1/namespace/{id}/exists", body: "json" },
  { method: "POST", path: "/v1/namespace/{id}/create", body: "json" },
  { method: "POST", path: "/v1/namespace/{id}/drop", body: "json", protect: true },
  { method: "POST", path: "/v1/table/{id}/describe", body: "json" },
  { method: "POST", path: "/v1/table/{id}/exists", body: "json" },
  { method: "POST", path: "/v1/table/{id}/declare", body: "json" },
  { method: "POST", path: "/v1/table/{id}/count_rows", body: "json" },
  { method: "POST", path: "/v1/table/{id}/query", body: "json" },
  { method: "POST", path: "/v1/table/{id}/version/list", body: "json" },
  { method: "POST", path: "/v1/table/{id}/tags/list", body: "json" },
  { method: "POST", path: "/v1/table/{id}/create", body: "arrow" },
  { method: "POST", path: "/v1/table/{id}/insert", body: "arrow" },
  { method: "POST", path: "/v1/tables/{id}", body: "arrow" },
  { method: "POST", path: "/v1/table/{id}/drop", body: "json", protect: true },
  { method: "POST", path: "/v1/table/{id}/rename", body: "json", protect: true, json: (raw) => ({ new_table_name: raw }) },
];

describe("fuzzed identifiers", () => {
  it("never escape, never fail the server, never change the root when refused", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ID_OPS), nastyString(), fc.boolean(), async (op, raw, asIs) => {
        const p = op.path.replace("{id}", segment(raw, asIs));
        // Dropping or renaming a fixture would succeed, and the other properties need the fixtures. The server
        // sees the path after `.` and `..` segments are resolved, so that is the path to compare.
        const target = /^\/v1\/(?:table|namespace)\/([^/]*)\//.exec(new URL(p, "http://x").pathname)?.[1];
        if (op.protect && target !== undefined && FIXTURES.has(decodesTo(target) ?? "")) return;
        const req =
          op.body === "arrow"
            ? arrowRequest(p, VALID)
            : op.body === "json"
              ? jsonRequest(op.method, p, op.json ? op.json(raw) : {})
              : { method: op.method, path: p, headers: authed() };
        await hostile(req);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe("fuzzed delimiters", () => {
  it("resolve exactly the identifier they delimit, or are refused in the documented shape", async () => {
    const delimiter = fc.oneof(
      fc.string({ unit: "binary", maxLength: 20 }).filter(wellFormed),
      fc.constantFrom("", "$", ".", "/", "%", "%24", "..", "\u0000", "\n", "ns", "t", "$$", "\u2215", "a".repeat(17)),
    );
    await fc.assert(
      fc.asyncProperty(delimiter, fc.boolean(), async (d, twice) => {
        const parts = ["ns", "t"];
        const id = parts.join(d);
        const query = `delimiter=${encodeURIComponent(d)}${twice ? `&delimiter=${encodeURIComponent(d)}` : ""}`;
        const reply = await hostile(jsonRequest("POST", `/v1/table/${encodeURIComponent(id)}/describe?${query}`, {}));
        // eslint-disable-next-line no-control-regex
        const valid = !twice && d.length >= 1 && d.length <= 16 && !/[\u0000-\u001f\u007f]/.test(d);
        const resolves = valid && id.split(d).length === parts.length && id.split(d).every((p, i) => p === parts[i]);
        if (resolves) {
          expect(reply.status, `delimiter ${JSON.stringify(d)}: ${reply.text.slice(0, 200)}`).toBe(200);
          expect(JSON.parse(reply.text)).toMatchObject({ table: "t", namespace: ["ns"] });
        } else expect(reply.status).toBeGreaterThanOrEqual(400);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

/** The field names of a route's query or body schema. */
const fieldsOf = (schema: unknown) => Object.keys((schema as { shape?: object } | undefined)?.shape ?? {});

/** Query parameters of one operation or another, so that any endpoint may get ones meant for another. */
const QUERY_KEYS = [...new Set(apiRoutes.flatMap((r) => fieldsOf(r.query)))];

const QUERY_TARGETS: Array<{ operationId: string; method: string; path: string; arrow?: boolean }> = [
  { operationId: "ListAllTables", method: "GET", path: "/v1/table" },
  { operationId: "ListTablesEnterprise", method: "GET", path: "/v1/tables" },
  { operationId: "ListNamespaces", method: "GET", path: "/v1/namespace/ns/list" },
  { operationId: "ListTables", method: "GET", path: "/v1/namespace/%24/table/list" },
  { operationId: "ListNamespaceEntries", method: "GET", path: "/v1/namespace/ns/entries" },
  { operationId: "SearchCatalog", method: "GET", path: "/v1/search" },
  { operationId: "ListTableVersions", method: "GET", path: "/v1/table/ns$t/version/list" },
  { operationId: "ListTableTags", method: "GET", path: "/v1/table/ns$t/tags/list" },
  { operationId: "DescribeTable", method: "GET", path: "/v1/table/ns$t/describe" },
  { operationId: "ListAuditLog", method: "GET", path: "/v1/admin/audit" },
  { operationId: "InsertIntoTable", method: "POST", path: "/v1/table/ns$scratch/insert", arrow: true },
  { operationId: "MergeInsertIntoTable", method: "POST", path: "/v1/table/ns$scratch/merge_insert", arrow: true },
  { operationId: "CreateTable", method: "POST", path: "/v1/table/ns$qcreate/create", arrow: true },
];

/** An operation's own query parameters but the delimiter, which has a property of its own (and refuses most values). */
const ownQueryKeys = (operationId: string) => fieldsOf(apiRoutes.find((r) => r.operationId === operationId)!.query).filter((k) => k !== "delimiter");

describe("fuzzed query parameters", () => {
  it("are parsed or refused, never fail the server", async () => {
    // Values of the right kind for some parameter and the wrong kind for others: booleans, numbers, modes,
    // durations, JSON (whole or broken), field paths, page tokens.
    const value = fc.oneof(
      { weight: 2, arbitrary: nastyString() },
      { weight: 1, arbitrary: fc.integer({ min: -2, max: 2000 }).map(String) },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          ...["", "true", "false", "yes", "-1", "0", "1.5", "1e309", "NaN", "9007199254740993", "1001", "Overwrite", "exist_ok", "upsert"],
          ...["{}", '{"a":1}', '{"a":"b"}', "[]", "null", "{", '{"a":', "{'a':1}", "1ms", "0s", "5 min", "id", "`", "a..b", "eyJ9", "%"],
        ),
      },
    );
    // Mostly the operation's own parameters, which it parses; now and then another's, or a made-up one.
    const request = fc
      .constantFrom(...QUERY_TARGETS)
      .chain((target) =>
        fc.tuple(
          fc.constant(target),
          fc.array(
            fc.tuple(
              fc.oneof(
                { weight: 4, arbitrary: fc.constantFrom(...ownQueryKeys(target.operationId)) },
                { weight: 1, arbitrary: fc.constantFrom(...QUERY_KEYS) },
                { weight: 1, arbitrary: nastyString() },
              ),
              value,
              fc.boolean(),
            ),
            { maxLength: 5 },
          ),
        ),
      );
    await fc.assert(
      fc.asyncProperty(request, async ([target, pairs]) => {
        const query = pairs.map(([k, v, asIs]) => `${segment(k, asIs)}=${segment(v, asIs)}`).join("&");
        const p = `${target.path}?${query}`;
        await hostile(target.arrow ? arrowRequest(p, VALID) : { method: target.method, path: p, headers: authed() });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

/** A valid body per JSON operation, which the fuzzing then damages. */
const BASE_BODIES: Record<string, Record<string, unknown>> = {
  CreateNamespace: { mode: "Create", properties: { a: "b" } },
  DropNamespace: { mode: "Fail", behavior: "Restrict" },
  DeclareTable: { location: "", properties: { a: "b" } },
  DescribeTable: { version: 1 },
  TableExists: { version: 1 },
  CountTableRows: { predicate: "id > 1" },
  QueryTable: { filter: "id > 1", columns: ["id"], limit: 3 },
  AlterTableAlterColumns: { alterations: [{ path: "s", nullable: true }] },
  RestoreTable: { version: 1 },
  GetTableTagVersion: { tag: "v1" },
  CreateTableTag: { tag: "t2", version: 1 },
  UpdateTableTag: { tag: "v1", version: 1 },
  DeleteTableTag: { tag: "nope" },
  CreateTableBranch: { name: "b2" },
  DeleteTableBranch: { name: "nope" },
  AlterTableAddColumns: { new_columns: [{ name: "c", expression: "id * 2" }] },
  AlterTableDropColumns: { columns: ["nope"] },
  UpdateTable: { predicate: "id = 1", updates: [["x", "x + 1"]] },
  DeleteFromTable: { predicate: "id = -1" },
  CreateTableIndex: { column: "id", index_type: "BTREE" },
  RenameTable: { new_table_name: "renamed" },
  CreateApiKey: { name: "k", role: "viewer" },
  CreateGrant: { principal: { type: "user", name: "u" }, role: "viewer", scope: { kind: "namespace", id: ["ns"] } },
  CreateDatabase: { name: "db" },
};

const TABLE_READS = new Set(["DescribeTable", "TableExists", "CountTableRows", "QueryTable", "ListTableVersions"]);

/** Where each operation is aimed: reads, tags and branches at the full fixture, other writes at the scratch table. */
function tableFor(op: string): string {
  // Drops and renames that succeeded would take a fixture away.
  if (op === "DropTable" || op === "RenameTable") return "ns$ghost";
  if (op === "DeclareTable") return `ns$${freshName("d")}`;
  if (TABLE_READS.has(op) || op.includes("Tag") || op.includes("Branch")) return "ns$t";
  return "ns$scratch";
}

function pathFor(route: RouteDef): string {
  const op = route.operationId;
  const namespace = op === "CreateNamespace" ? `ns$${freshName("n")}` : op === "DropNamespace" ? "ns$ghost" : "ns";
  const path = route.path
    .replace("{id}", route.access.on === "table" ? tableFor(op) : namespace)
    .replace("{table_name}", freshName("e"))
    .replace("{key_id}", "0123456789abcdef")
    .replace("{grant_id}", "0123456789abcdef");
  // A maintenance job outlives its request: waiting for it keeps its work out of the next request's check.
  return fieldsOf(route.query).includes("wait") ? `${path}?wait=true` : path;
}

const JSON_ROUTES = apiRoutes.filter((r) => r.body?.kind === "json");

/** Sets or deletes a field: one of the operation's own when `own` picks one, else `key`. */
const mutation = fc.oneof(
  fc.record({
    kind: fc.constant("set" as const),
    own: fc.option(fc.nat()),
    key: fc.oneof(fc.constantFrom("id", "identity", "context", "version", "tag", "branch", "name", "location", "properties", "mode"), fc.string()),
    value: jsonValue(),
  }),
  fc.record({ kind: fc.constant("delete" as const), own: fc.option(fc.nat()), key: fc.string({ maxLength: 3 }) }),
);

describe("fuzzed JSON bodies", () => {
  it("are validated or refused on every JSON operation, never fail the server", async () => {
    const damaged = fc.oneof(
      { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((m) => ({ mutations: m, text: undefined as string | undefined })) },
      {
        weight: 1,
        arbitrary: fc
          .oneof(
            fc.string({ unit: "binary" }),
            fc.json().map((j) => j.slice(0, Math.max(1, j.length - 1))),
            fc.constantFrom("[]", "1", '"x"', "null", "true", "{}}", "\u0000"),
          )
          .map((text) => ({ mutations: [], text })),
      },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...JSON_ROUTES.map((r) => r.operationId)),
        damaged,
        fc.constantFrom("application/json", "text/plain", "application/json; charset=latin1", ""),
        async (operationId, d, type) => {
          const route = JSON_ROUTES.find((r) => r.operationId === operationId)!;
          const body: Record<string, unknown> = { ...(BASE_BODIES[route.operationId] ?? {}) };
          const own = fieldsOf((route.body as { schema: unknown }).schema);
          for (const m of d.mutations) {
            const key = m.own !== null && own.length ? own[m.own % own.length] : m.key;
            if (m.kind === "set") body[key] = m.value;
            else delete body[key];
          }
          const headers: Record<string, string> = type ? { "content-type": type } : {};
          await hostile({ method: "POST", path: pathFor(route), headers: authed(headers), body: d.text ?? JSON.stringify(body) });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------- Arrow

const TYPES: Array<() => { type: DataType; values: unknown[] }> = [
  () => ({ type: new Int64(), values: [1n, 2n] }),
  () => ({ type: new Int8(), values: [1, -1] }),
  () => ({ type: new Int16(), values: [null, 7] }),
  () => ({ type: new Uint64(), values: [2n ** 63n, 0n] }),
  () => ({ type: new Float32(), values: [NaN, Infinity] }),
  () => ({ type: new Float64(), values: [-0, 1e308] }),
  () => ({ type: new Utf8(), values: ["", "\u0000"] }),
  () => ({ type: new Binary(), values: [new Uint8Array([0]), new Uint8Array()] }),
  () => ({ type: new Bool(), values: [true, null] }),
  () => ({ type: new Null(), values: [null, null] }),
  () => ({ type: new TimestampMillisecond(), values: [0, 8.64e15] }),
  () => ({ type: new List(new Field("item", new Int32(), true)), values: [[1], []] }),
  () => ({ type: new Struct([new Field("a", new Utf8(), true)]), values: [{ a: "x" }, { a: null }] }),
  () => ({ type: new Dictionary(new Utf8(), new Int32()), values: ["a", "b"] }),
];

const columnName = fc.oneof(fc.constantFrom("id", "x", "s", "", "a.b", "`", "_rowid", "_distance", "id "), fc.string({ maxLength: 5 }));

/** A table of two rows with arbitrary column names and types. */
const wrongSchema = fc.array(fc.tuple(columnName, fc.nat({ max: TYPES.length - 1 })), { minLength: 0, maxLength: 4 }).map((cols) => {
  const fields = cols.map(([name, t]) => ({ name, ...TYPES[t]() }));
  const unique = fields.filter((f, i) => fields.findIndex((g) => g.name === f.name) === i);
  if (unique.length === 0) return stream(new Table(new Schema([])));
  return stream(new Table(Object.fromEntries(unique.map((f) => [f.name, vectorFromArray(f.values as never[], f.type)]))));
});

type ByteMutation =
  | { op: "truncate"; at: number }
  | { op: "flip"; at: number; bit: number }
  | { op: "int32"; at: number; value: number }
  | { op: "insert"; at: number; bytes: Uint8Array };

const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("flip" as const), at: fc.nat(), bit: fc.nat({ max: 7 }) }),
  // Lengths and counts in Arrow metadata are 32-bit: these are the values that break length arithmetic.
  fc.record({ op: fc.constant("int32" as const), at: fc.nat(), value: fc.constantFrom(0, -1, 1, 0x7fffffff, -0x80000000, 8, 0xffff) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 16 }) }),
);

function damage(base: Uint8Array, mutations: ByteMutation[]): Uint8Array {
  let out = Buffer.from(base);
  for (const m of mutations) {
    const at = m.at % Math.max(1, out.length);
    if (m.op === "truncate") out = out.subarray(0, at);
    else if (m.op === "flip") out[at] ^= 1 << m.bit;
    else if (m.op === "int32" && out.length >= 4) out.writeInt32LE(m.value, Math.min(at - (at % 4), out.length - 4));
    else if (m.op === "insert") out = Buffer.concat([out.subarray(0, at), Buffer.from(m.bytes), out.subarray(at)]);
  }
  return new Uint8Array(out);
}

/** What the byte mutations start from: a stream, a file, a stream with a dictionary, and one without batches. */
const BASE_STREAMS = [
  VALID,
  tableToIPC(rows(0, 3), "file"),
  stream(new Table({ id: vectorFromArray([1n, 2n], new Int64()), s: vectorFromArray(["a", "b"], new Dictionary(new Utf8(), new Int32())) })),
  stream(new Table(rows(0, 1).schema)),
];

/** One row whose string column carries a dictionary of many long values, so the dictionary dwarfs the batch. */
const hugeDictionary = () => {
  const values = Array.from({ length: 50_000 }, (_, i) => `value-${i}-${"x".repeat(40)}`);
  return stream(new Table({ id: vectorFromArray([1n], new Int64()), s: vectorFromArray(values, new Dictionary(new Utf8(), new Int32())).slice(0, 1) }));
};

/** A batch whose column has a null but an empty validity bitmap: well framed, yet the engine's reader panics on it. */
function emptyValidity(): Uint8Array {
  const buf = Buffer.from(stream(new Table({ n: vectorFromArray([1, null, 3], new Int32()) })));
  const batch = 8 + buf.readInt32LE(4);
  const metadata = new flatbuffers.ByteBuffer(buf.subarray(batch + 8, batch + 8 + buf.readInt32LE(batch + 4)));
  const validity = FbMessage.getRootAsMessage(metadata).header(new FbRecordBatch())!.buffers(0)!;
  buf.writeBigInt64LE(0n, batch + 8 + validity.bb_pos + 8);
  return buf;
}

const ARROW_TARGETS = [
  () => "/v1/table/ns$scratch/insert",
  () => "/v1/table/ns$scratch/insert?mode=overwrite",
  () => "/v1/table/ns$declared/insert",
  () => "/v1/table/ns$scratch/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true",
  () => `/v1/table/ns$${freshName("c")}/create`,
  () => `/v1/tables/${freshName("e")}`,
];

describe("fuzzed Arrow streams", () => {
  it("truncated, corrupted, of the wrong schema or without batches: refused or written, never half-written", async () => {
    const bodies = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.tuple(fc.constantFrom(...BASE_STREAMS), fc.array(byteMutation, { minLength: 1, maxLength: 3 })).map(([b, m]) => damage(b, m)),
      },
      { weight: 2, arbitrary: wrongSchema },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: ARROW_TARGETS.length - 1 }), bodies, async (t, body) => {
        const reply = await hostile(arrowRequest(ARROW_TARGETS[t](), body));
        // A materialized declared table would no longer take the declared-only path; declare it afresh.
        if (t === 2 && reply.status === 200) {
          expect((await api.post("/v1/table/ns$declared/drop", {})).status).toBe(200);
          expect((await api.post("/v1/table/ns$declared/declare", {})).status).toBe(200);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("refuses whole a body the engine cannot read to the end: no table, no declared table filled, no overwrite", async () => {
    expect((await api.arrow("/v1/table/ns$numbers/create", new Table({ n: vectorFromArray([1, 2], new Int32()) }))).status).toBe(200);
    expect((await api.post("/v1/table/ns$unfilled/declare", {})).status).toBe(200);
    const targets = [
      `/v1/table/ns$${freshName("v")}/create`,
      "/v1/table/ns$unfilled/insert",
      "/v1/table/ns$numbers/insert",
      "/v1/table/ns$numbers/merge_insert?on=n&when_matched_update_all=true&when_not_matched_insert_all=true",
      "/v1/table/ns$numbers/create?mode=overwrite",
    ];
    for (const p of targets) expect((await hostile(arrowRequest(p, emptyValidity()))).status, p).toBe(400);
    expect((await api.post<number>("/v1/table/ns$numbers/count_rows", {})).body).toBe(2);
    expect((await api.post("/v1/table/ns$unfilled/describe", {})).body).toMatchObject({ is_only_declared: true });
  });

  it("takes a huge dictionary and a stream without batches without failing", async () => {
    await hostile(arrowRequest("/v1/table/ns$scratch/insert", hugeDictionary()));
    await hostile(arrowRequest(`/v1/table/ns$${freshName("h")}/create`, hugeDictionary()));
    await hostile(arrowRequest("/v1/table/ns$scratch/insert", stream(new Table(rows(0, 1).schema))));
  });
});

// ---------------------------------------------------------------- headers and context

/** Cookies, tokens and names made of the pieces that trip up decoding and parsing. */
const percentJunk = fc
  .array(fc.constantFrom("%", "%zz", "%E0%A4%A", "%C0%AE", "%25", "=", "; ", ".", "/", "a", "Bearer ", "qvr_", "next-auth.session-token"), {
    minLength: 1,
    maxLength: 6,
  })
  .map((parts) => parts.join(""));
const headerValue = fc.oneof(
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 40,
  }),
  fc.constantFrom("", "..", "../..", "default", "a".repeat(64), "a".repeat(65), "application/vnd.apache.arrow.stream", "gzip"),
  percentJunk,
);
const cookie = fc
  .array(fc.tuple(fc.constantFrom("next-auth.session-token", "__Secure-next-auth.session-token", "a", "%"), percentJunk), { minLength: 1, maxLength: 3 })
  .map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join("; "));
const HEADER_NAMES = [
  "x-quiver-database",
  "x-lancedb-database",
  "x-request-id",
  "cookie",
  "authorization",
  "x-api-key",
  "content-type",
  "content-encoding",
  "accept",
  "origin",
  "sec-fetch-site",
  "host",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-middleware-subrequest",
  "next-router-state-tree",
  "rsc",
];
const HEADER_TARGETS: Array<() => RawRequest> = [
  () => ({ method: "GET", path: "/v1/whoami", headers: {} }),
  () => ({ method: "GET", path: "/v1/namespace/ns/list", headers: {} }),
  () => jsonRequest("POST", "/v1/table/ns$t/query", { limit: 2 }),
  () => jsonRequest("POST", `/v1/namespace/ns$${freshName("h")}/create`, {}),
  () => arrowRequest("/v1/table/ns$scratch/insert", VALID),
  () => jsonRequest("POST", "/v1/admin/databases/create", { name: freshName("db") }),
];

describe("fuzzed headers", () => {
  it("cannot reach another database or fail the server", async () => {
    const headerName = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("x-quiver-database", "x-lancedb-database", "cookie", "authorization", "x-api-key") },
      { weight: 1, arbitrary: fc.constantFrom(...HEADER_NAMES) },
      { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/) },
    );
    const header = fc.oneof(fc.tuple(headerName, headerValue), fc.tuple(fc.constant("cookie"), cookie));
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: HEADER_TARGETS.length - 1 }), fc.array(header, { maxLength: 4 }), fc.boolean(), async (t, pairs, keepKey) => {
        const req = HEADER_TARGETS[t]();
        const headers: Record<string, string> = { ...req.headers };
        if (!keepKey) delete headers["x-api-key"];
        for (const [name, value] of pairs) headers[name] = value;
        const reply = await hostile({ ...req, headers });
        const database = headers["x-quiver-database"] || headers["x-lancedb-database"];
        if (database && reply.status === 200 && !req.path.startsWith("/v1/admin")) expect(database).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

const INJECTED = "Injected-By-Context";
/** Hop-by-hop and framing headers, cookies and redirects, and the headers the server sets itself. */
const SENSITIVE_HEADERS = [
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-authenticate",
  "set-cookie",
  "location",
  "content-length",
  "x-request-id",
  "content-type",
  "cache-control",
  "www-authenticate",
];
const contextKey = fc.oneof(
  fc.constantFrom(...SENSITIVE_HEADERS).map((h) => `header.${h}`),
  fc.constantFrom(...SENSITIVE_HEADERS).map((h) => `header.X-Foo\r\n${h}`),
  fc.string().map((s) => `header.${s}`),
  fc.string(),
);
const contextValue = fc.oneof(
  fc.constantFrom(`${INJECTED}`, `ok\r\nSet-Cookie: ${INJECTED}=1`, `ok\r\n\r\n${INJECTED}`, `ok\n${INJECTED}: 1`, `chunked`, `close`, `0`),
  fc.string().map((s) => `${s}${INJECTED}`),
  jsonValue(),
);
const CONTEXT_TARGETS: Array<(context: unknown) => RawRequest> = [
  (context) => jsonRequest("POST", "/v1/namespace/ns/describe", { context }),
  (context) => jsonRequest("POST", "/v1/table/ns$t/describe", { context }),
  (context) => jsonRequest("POST", "/v1/table/ns$t/count_rows", { context }),
  (context) => jsonRequest("POST", "/v1/table/ns$t/query", { context, limit: 1 }),
  (context) => jsonRequest("POST", "/v1/table/ns$ghost/describe", { context }),
  (context) => jsonRequest("POST", `/v1/namespace/ns$${freshName("x")}/create`, { context }),
  (context) => jsonRequest("POST", "/v1/table/ns$t/describe", { context, version: -1 }),
];

describe("fuzzed context entries", () => {
  it("never become response headers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: CONTEXT_TARGETS.length - 1 }),
        fc.oneof(fc.dictionary(contextKey, contextValue, { maxKeys: 6 }), jsonValue()),
        async (t, context) => {
          const reply = await hostile(CONTEXT_TARGETS[t](context));
          const raw = reply.rawHeaders.join("\n");
          expect(raw).not.toContain(INJECTED);
          expect(reply.headers["set-cookie"]).toBeUndefined();
          expect(reply.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
          if (String(reply.headers["content-type"]).startsWith("application/json")) {
            const body = JSON.parse(reply.text) as { context?: Record<string, string> };
            if (body.context) {
              expect(JSON.stringify(body.context)).not.toContain(INJECTED);
              for (const key of Object.keys(body.context)) expect(reply.headers[key.slice("header.".length)], key).toBeDefined();
            }
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe("outside the data root", () => {
  it("a Lance dataset beside the root cannot be registered, declared over, dropped or deregistered, and stays untouched", async () => {
    const relative = `${beside.relative}/victim.lance`;
    const absolute = `${beside.uri}/victim.lance`;
    const aims = [relative, `./${relative}`, `ns/../${relative}`, absolute, `file://${absolute}`, encodeURIComponent(relative)];
    for (const location of aims) {
      const name = freshName("aimed");
      for (const id of [name, `ns$${name}`]) {
        for (const req of [jsonRequest("POST", `/v1/table/${id}/register`, { location }), jsonRequest("POST", `/v1/table/${id}/declare`, { location })]) {
          expect((await hostile(req)).status, `${show(req)} was not refused`).toBe(400);
        }
        for (const op of ["describe", "drop", "deregister"]) {
          const req = jsonRequest("POST", `/v1/table/${id}/${op}`, {});
          expect((await hostile(req)).status, show(req)).toBe(404);
        }
      }
    }
    expect(changes(besideBefore, await beside.state())).toEqual([]);
    expect(changes(canaryBefore, snapshot(canary))).toEqual([]);
  });
});
