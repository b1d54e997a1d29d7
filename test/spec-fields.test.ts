/**
 * Every operation and field of the Lance Namespace spec, checked against the contract: the summary in
 * test/fixtures/lance-namespace-spec.json (derived from the spec by scripts/summarize-spec.mjs) names each operation's
 * method, path, query parameters and the fields of its request and answer; each one must be routed, each request
 * field taken by the operation's schema (and so honoured, or refused with 406 by the field's `unsupported` mark), and
 * each answer field in the answer's schema, unless the table of field exceptions in docs/clients.md says why not.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { operations, type OperationId } from "@/lib/contract/operations";
import { unsupportedReason } from "@/lib/contract/common";
import { REFUSED_OPERATIONS } from "@/server/http/refused-operations";
import { defOf, WRAPPERS } from "@/server/http/unknown-fields";

interface SpecField {
  path: string;
  required: boolean;
}
interface SpecBody {
  kind: string;
  shape?: string;
  fields?: SpecField[];
}
interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  query: string[];
  request: SpecBody;
  response: SpecBody & { status: string };
}
const summary = JSON.parse(readFileSync("test/fixtures/lance-namespace-spec.json", "utf8")) as { source: string; operations: SpecOperation[] };

const readme = readFileSync("docs/clients.md", "utf8");
const exceptionsSection = readme.slice(readme.indexOf("### Fields of the spec"));
/** The field exceptions of docs/clients.md: `| Operation | request or answer `path` | why |`, `*` for every operation. */
const exceptions = [...exceptionsSection.matchAll(/^\| (\*|\w+) \| (request|answer) `([^`]+)` \| ([^|]+) \|$/gm)].map(([, operationId, side, path, why]) => ({
  operationId,
  side,
  path,
  why: why.trim(),
}));

/** The schemas a field path leads to in `schema` (several through unions); none when the schema has no such field. */
function at(schema: z.ZodType, path: string[]): z.ZodType[] {
  if (path.length === 0) return [schema];
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return at(def.innerType!, path);
  const [head, ...rest] = path;
  switch (def.type) {
    case "object":
      return head !== "*" && head !== "[]" && Object.hasOwn(def.shape!, head) ? at(def.shape![head], rest) : [];
    case "array":
      return head === "[]" ? at(def.element!, rest) : [];
    // A map takes any key: `*` in the summary, or a key the spec names inside a value the contract keeps as a map.
    case "record":
      return head === "[]" ? [] : at(def.valueType!, rest);
    case "union":
      return def.options!.flatMap((option) => at(option, path));
    case "intersection":
      return [...at(def.left!, path), ...at(def.right!, path)];
    case "pipe":
      return [...at(def.in!, path), ...at(def.out!, path)];
    case "lazy":
      return at(def.getter!(), path);
    // A value the schema takes whole (any JSON) holds whatever fields the spec gives it.
    case "unknown":
    case "any":
      return [schema];
    default:
      return [];
  }
}
const segments = (path: string) => path.replace(/\[\]/g, ".[]").split(".").filter(Boolean);
const has = (schema: z.ZodType, path: string) => at(schema, segments(path)).length > 0;
/** The reason a field is refused (406) when sent, if the schema marks it so on the way to it. */
function refusedWhy(schema: z.ZodType, path: string): string | undefined {
  const parts = segments(path);
  for (let i = 1; i <= parts.length; i++)
    for (const inner of at(schema, parts.slice(0, i))) {
      const why = unsupportedReason(inner);
      if (why) return why;
    }
  return undefined;
}

const refused = new Set(REFUSED_OPERATIONS.map((op) => op.operationId));
const specOps = summary.operations;
const served = specOps.filter((op) => !refused.has(op.operationId));
const contract = (op: SpecOperation) => operations[op.operationId as OperationId];
/** The exceptions' row for a field: its own, or a `*` row naming the field wherever it is (`transaction_id`). */
const exception = (op: SpecOperation, side: "request" | "answer", path: string) =>
  exceptions.find(
    (e) => e.side === side && ((e.operationId === op.operationId && e.path === path) || (e.operationId === "*" && path.split(".").pop() === e.path)),
  );

describe(`the contract against ${summary.source}`, () => {
  it("refuses, with its reason, each operation it does not serve, and routes every other", () => {
    expect(specOps.length).toBeGreaterThan(50);
    for (const op of specOps.filter((o) => refused.has(o.operationId)))
      expect(REFUSED_OPERATIONS.find((r) => r.path.test(op.path.replace("{id}", "t")))?.operationId).toBe(op.operationId);
    for (const op of served) {
      const ours = contract(op);
      expect(ours, op.operationId).toBeDefined();
      expect(ours.path, op.operationId).toBe(op.path);
      expect(ours.methods, op.operationId).toContain(op.method);
    }
  });

  it.each(served)("$operationId takes every query parameter the spec gives it", (op) => {
    const ours = contract(op);
    const missing = op.query.filter((name) => !(ours.query && has(ours.query, name)));
    expect(missing, missing.join(", ")).toEqual([]);
  });

  it.each(served)("$operationId takes every request field the spec defines", (op) => {
    const ours = contract(op);
    const body = ours.body as { kind: string; schema?: z.ZodType } | undefined;
    if (op.request.kind === "none") return;
    expect(body?.kind, op.operationId).toBe(op.request.kind);
    if (op.request.kind !== "json") return;
    const missing = (op.request.fields ?? []).filter((f) => !has(body!.schema!, f.path)).map((f) => f.path);
    expect(missing, missing.join(", ")).toEqual([]);
  });

  it.each(served)("$operationId answers every field the spec defines, or docs/clients.md says why not", (op) => {
    const response = contract(op).response;
    if (op.response.kind !== "json" || !op.response.fields?.length) return;
    expect(typeof response, `${op.operationId} answers JSON`).toBe("object");
    const missing = op.response.fields.filter((f) => !has(response as z.ZodType, f.path) && !exception(op, "answer", f.path)).map((f) => f.path);
    expect(missing, missing.join(", ")).toEqual([]);
  });

  it("lists in docs/clients.md, with its reason, each request field refused with 406 and no other", () => {
    const marked = served.flatMap((op) => {
      const body = contract(op).body as { kind: string; schema?: z.ZodType } | undefined;
      if (!body?.schema) return [];
      return (op.request.fields ?? [])
        .map((f) => ({ operationId: op.operationId, path: f.path, why: refusedWhy(body.schema!, f.path) }))
        .filter((f) => f.why && !(op.request.fields ?? []).some((outer) => f.path.startsWith(`${outer.path}.`) && refusedWhy(body.schema!, outer.path)));
    });
    const listed = exceptions.filter((e) => e.side === "request");
    expect(listed.map((e) => `${e.operationId} ${e.path}`).sort()).toEqual(marked.map((f) => `${f.operationId} ${f.path}`).sort());
    for (const f of marked)
      expect(
        exception(
          specOps.find((o) => o.operationId === f.operationId)!,
          "request",
          f.path,
        )?.why,
      ).toContain(f.why);
  });

  it("lists in docs/clients.md only answer fields the contract really leaves out", () => {
    // A `*` row covers the answers that leave the field out: there must be some.
    for (const e of exceptions.filter((x) => x.side === "answer" && x.operationId === "*")) {
      const where = served.flatMap((op) => (op.response.fields ?? []).filter((f) => f.path.split(".").pop() === e.path).map((f) => ({ op, f })));
      expect(where.filter(({ op, f }) => !has(contract(op).response as z.ZodType, f.path)).length, `${e.path} is left out of some answer`).toBeGreaterThan(0);
    }
    for (const e of exceptions.filter((x) => x.side === "answer" && x.operationId !== "*")) {
      const op = specOps.find((o) => o.operationId === e.operationId);
      expect(
        op?.response.fields?.some((f) => f.path === e.path),
        `${e.operationId} ${e.path} is a field of the spec`,
      ).toBe(true);
      expect(has(contract(op!).response as z.ZodType, e.path), `${e.operationId} ${e.path} is not in the answer's schema`).toBe(false);
    }
  });
});
