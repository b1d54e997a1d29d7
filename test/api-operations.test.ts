/**
 * The operation table of docs/clients.md (the Lance Namespace spec's operations) is complete and true: every operation of the spec is in
 * it once; each one it calls served is a route of the API at that method and path with its named test; each one it
 * calls refused answers the status and code it gives, naming the operation, and changes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "@/app/v1/_routes";
import { operations, type OperationId } from "@/lib/contract/operations";
import { client, expectError, rows as sampleRows } from "./client";
import { rootSnapshot, startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

/** The operations of spec 0.11.1's operation table, and 0.4.4's CreateEmptyTable. */
const SPEC_OPERATIONS = [
  "CreateNamespace",
  "ListNamespaces",
  "DescribeNamespace",
  "DropNamespace",
  "NamespaceExists",
  "ListTables",
  "ListAllTables",
  "RegisterTable",
  "DescribeTable",
  "TableExists",
  "DropTable",
  "DeregisterTable",
  "RestoreTable",
  "RenameTable",
  "UpdateTableSchemaMetadata",
  "ListTableVersions",
  "CreateTableVersion",
  "DescribeTableVersion",
  "BatchDeleteTableVersions",
  "BatchCreateTableVersions",
  "BatchCommitTables",
  "AlterTableAlterColumns",
  "UpdateFieldMetadata",
  "AlterTableDropColumns",
  "GetTableStats",
  "InsertIntoTable",
  "MergeInsertIntoTable",
  "UpdateTable",
  "DeleteFromTable",
  "QueryTable",
  "CountTableRows",
  "CreateTable",
  "ExplainTableQueryPlan",
  "AnalyzeTableQueryPlan",
  "AlterTableAddColumns",
  "AlterTableBackfillColumns",
  "RefreshMaterializedView",
  "CreateMaterializedView",
  "CreateTableIndex",
  "CreateTableScalarIndex",
  "ListTableIndices",
  "DescribeTableIndexStats",
  "DropTableIndex",
  "ListTableTags",
  "GetTableTagVersion",
  "DeclareTable",
  "CreateEmptyTable",
  "CreateTableTag",
  "DeleteTableTag",
  "UpdateTableTag",
  "ListTableBranches",
  "CreateTableBranch",
  "DeleteTableBranch",
  "DescribeTransaction",
  "AlterTransaction",
];

const readme = readFileSync("docs/clients.md", "utf8");
const section = readme.slice(readme.indexOf("## Every operation of the Lance Namespace spec"));
const table = [...section.matchAll(/^\| (\w+) \| `(GET|POST) ([^`]+)` \| ([^|]+) \| `([^`]+)` \|$/gm)].map(([, name, method, path, quiver, test]) => ({
  name,
  method,
  path,
  quiver: quiver.trim(),
  test,
}));
const served = table.filter((row) => row.quiver.startsWith("served"));
const refused = table.filter((row) => row.quiver.startsWith("refused"));

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  expect((await api.arrow("/v1/table/t/create", sampleRows(0, 3))).status).toBe(200);
});
afterAll(() => server?.stop());

describe("the operation table of docs/clients.md", () => {
  it("lists every operation of the spec once, each served or refused", () => {
    expect(table.map((row) => row.name).sort()).toEqual([...SPEC_OPERATIONS].sort());
    expect(served.length + refused.length).toBe(table.length);
  });

  it.each(served)("$name is a route at $method $path, tested in $test", ({ name, method, path, test }) => {
    const route = apiRoutes.find((r) => r.operationId === name);
    expect(route, name).toBeDefined();
    expect(route!.path).toBe(path);
    expect(route!.methods).toContain(method);
    expect(existsSync(test)).toBe(true);
  });

  it.each(refused)("$name answers $quiver", async ({ name, method, path, quiver }) => {
    const [, status, code] = /^refused: (\d+), code (\d+)/.exec(quiver)!.map(Number);
    const before = await rootSnapshot(server);
    const reply = await api.raw(method, path.replace("{id}", "t"), JSON.stringify({}), { ...server.auth, "content-type": "application/json" });
    expectError(reply, status, code);
    expect(String(reply.body.detail)).toContain(name);
    expect(await rootSnapshot(server)).toEqual(before);
  });
});

describe("the contract's operations and the routes that serve them", () => {
  it("serves each operation of lib/contract/operations with exactly one route, made from that operation", () => {
    const ids = apiRoutes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(Object.keys(operations).sort());
    for (const route of apiRoutes) {
      const spec = operations[route.operationId as OperationId];
      for (const key of ["summary", "group", "methods", "path", "query", "body", "response"] as const)
        expect(route[key], `${route.operationId}.${key}`).toBe(spec[key]);
    }
  });
});

describe("operations served with Lance's answers for what this service never has", () => {
  it("transactions: an id no write gave is TransactionNotFound, after the request is checked", async () => {
    expectError(await api.post("/v1/transaction/tx1/describe", {}), 404, ErrorCode.TransactionNotFound);
    expectError(await api.post("/v1/transaction/tx1/alter", { actions: [{ setStatusAction: { status: "Canceled" } }] }), 404, ErrorCode.TransactionNotFound);
    expectError(await api.post("/v1/transaction/tx1/alter", { actions: [] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/transaction/tx1/alter", { actions: [{ setStatusAction: { status: "Paused" } }] }), 400, ErrorCode.InvalidInput);
  });

  it("CreateEmptyTable declares a table, as spec 0.4.4's clients expect", async () => {
    const reply = await api.post<{ location: string }>("/v1/table/early/create-empty", {});
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.location).toMatch(/early\.lance$/);
    const described = await api.post("/v1/table/early/describe", { check_declared: true });
    expect(described.body).toMatchObject({ is_only_declared: true });
    expectError(await api.post("/v1/table/early/create-empty", {}), 409, ErrorCode.TableAlreadyExists);
  });
});
