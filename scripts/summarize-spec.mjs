#!/usr/bin/env node
/**
 * Derives the project's summary of a Lance Namespace spec (an OpenAPI document, e.g. lance-namespace-0.11.1.yaml)
 * that test/spec-fields.test.ts checks the API against: each operation's method and path, its query parameters,
 * what its body is, and every field of its JSON request and answer, nested fields as paths (`new_columns[].computed`,
 * `tags.*.version`). The project keeps this summary, not a copy of the spec; run it again when a new spec comes out:
 *
 *   node scripts/summarize-spec.mjs path/to/lance-namespace-X.Y.Z.yaml > test/fixtures/lance-namespace-spec.json
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import YAML from "yaml";

const file = process.argv[2];
if (!file) {
  console.error("usage: node scripts/summarize-spec.mjs <lance-namespace spec .yaml>");
  process.exit(2);
}
const spec = YAML.parse(readFileSync(file, "utf8"));

const refName = (ref) => ref.split("/").pop();
const resolve = (node) => {
  let seen = 0;
  while (node?.$ref) {
    const [, , kind, name] = node.$ref.split("/");
    node = spec.components[kind][name];
    if (++seen > 20) throw new Error(`a $ref loop at ${name}`);
  }
  return node;
};

/**
 * Every field under a schema as a path, with whether its object requires it. A schema met again below itself (the
 * Arrow field's children) is not walked twice; its path is marked with the schema's name instead.
 */
function fieldsOf(schema, prefix = "", stack = []) {
  const ref = schema?.$ref ? refName(schema.$ref) : undefined;
  if (ref && stack.includes(ref)) return [];
  const node = resolve(schema);
  if (!node || typeof node !== "object") return [];
  const inner = ref ? [...stack, ref] : stack;
  const branches = [...(node.allOf ?? []), ...(node.oneOf ?? []), ...(node.anyOf ?? [])];
  const out = branches.flatMap((branch) => fieldsOf(branch, prefix, inner));
  if (node.type === "array" || (Array.isArray(node.type) && node.type.includes("array"))) out.push(...fieldsOf(node.items, `${prefix}[]`, inner));
  if (node.additionalProperties && typeof node.additionalProperties === "object")
    out.push(...fieldsOf(node.additionalProperties, prefix ? `${prefix}.*` : "*", inner));
  const required = new Set(node.required ?? []);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.push({ path, required: required.has(name) });
    out.push(...fieldsOf(child, path, inner));
  }
  return out;
}

const unique = (fields) => {
  const byPath = new Map();
  for (const f of fields) byPath.set(f.path, { path: f.path, required: (byPath.get(f.path)?.required ?? false) || f.required });
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
};

function bodyOf(content) {
  if (!content) return { kind: "none" };
  const [type, media] = Object.entries(content)[0];
  if (type !== "application/json") return { kind: type.includes("arrow") ? "arrow" : type };
  const node = resolve(media.schema);
  if (node.type === "object" && node.properties)
    return { kind: "json", schema: media.schema.$ref ? refName(media.schema.$ref) : undefined, fields: unique(fieldsOf(media.schema)) };
  return { kind: "json", shape: node.type === "object" ? "map" : node.type };
}

const operations = [];
for (const [path, item] of Object.entries(spec.paths)) {
  const shared = item.parameters ?? [];
  for (const [method, op] of Object.entries(item)) {
    if (!op?.operationId) continue;
    const parameters = [...shared, ...(op.parameters ?? [])].map(resolve);
    const success = Object.entries(op.responses ?? {}).find(([status]) => /^2/.test(status));
    const answer = success ? resolve(success[1]) : undefined;
    operations.push({
      operationId: op.operationId,
      method: method.toUpperCase(),
      path,
      query: parameters
        .filter((p) => p.in === "query")
        .map((p) => p.name)
        .sort(),
      request: bodyOf(op.requestBody?.content),
      response: { status: success?.[0], ...bodyOf(answer?.content) },
    });
  }
}

const summary = {
  source: basename(file),
  title: spec.info?.title,
  generatedBy: "scripts/summarize-spec.mjs",
  operations: operations.sort((a, b) => a.operationId.localeCompare(b.operationId)),
};
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
