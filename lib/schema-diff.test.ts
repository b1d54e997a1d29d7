import { describe, expect, it } from "vitest";
import { diffSchemas } from "./schema-diff";
import type { JsonField } from "./arrow-schema";

const f = (name: string, type: string, nullable = true, fields?: JsonField[]): JsonField => ({ name, type: { type, ...(fields ? { fields } : {}) }, nullable });

describe("diffSchemas", () => {
  it("marks additions, removals, renames, type and nullability changes, nested too", () => {
    const before = { fields: [f("id", "int32", false), f("name", "string"), f("gone", "double"), f("k", "struct", true, [f("a", "int32"), f("b", "string")])] };
    const after = { fields: [f("id", "int64", true), f("label", "string"), f("k", "struct", true, [f("a", "int64"), f("bb", "string")]), f("extra", "bool")] };
    const changes = diffSchemas(before, after).map((c) => ({
      kind: c.kind,
      path: c.path.join("."),
      ...(c.kind === "renamed" ? { from: c.from } : {}),
      ...(c.kind === "changed" ? { what: c.what } : {}),
    }));
    expect(changes).toEqual([
      { kind: "changed", path: "id", what: ["type int32 → int64", "now nullable"] },
      { kind: "renamed", path: "label", from: "name" },
      { kind: "same", path: "k" },
      { kind: "changed", path: "k.a", what: ["type int32 → int64"] },
      { kind: "renamed", path: "k.bb", from: "b" },
      { kind: "added", path: "extra" },
      { kind: "removed", path: "gone" },
    ]);
  });

  it("reports nothing but sameness for identical schemas", () => {
    const s = { fields: [f("id", "int64"), f("s", "struct", true, [f("a", "int32")])] };
    expect(diffSchemas(s, s).map((c) => [c.kind, c.path.join(".")])).toEqual([
      ["same", "id"],
      ["same", "s"],
      ["same", "s.a"],
    ]);
  });
});
