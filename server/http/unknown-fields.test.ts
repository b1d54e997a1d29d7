import { describe, expect, it } from "vitest";
import { z } from "zod";
import { unsupported } from "@/lib/contract/common";
import { fieldIssues, unknownFields } from "./unknown-fields";

const schema = z.object({
  filter: z.string().nullish(),
  columns: z
    .union([z.array(z.string()), z.object({ column_names: z.array(z.string()).nullish(), column_aliases: z.record(z.string(), z.string()).nullish() })])
    .nullish(),
  alterations: z.array(z.object({ path: z.string(), rename: z.string().optional() })).optional(),
  order: z.object({ by: z.string() }).default({ by: "id" }),
  context: z.record(z.string(), z.unknown()).nullish(),
  count: z.string().pipe(z.coerce.number()).optional(),
});

describe("unknownFields", () => {
  it("names nothing when every key has a place, however deep", () => {
    expect(
      unknownFields(
        schema,
        { filter: "x", columns: { column_names: ["a"] }, alterations: [{ path: "a", rename: "b" }], context: { any: { thing: 1 } } },
        "body",
      ),
    ).toEqual([]);
    expect(unknownFields(schema, { columns: ["a"], order: null, count: "3" }, "body")).toEqual([]);
  });

  it("names each key the schema has no place for, with its path", () => {
    expect(
      unknownFields(
        schema,
        {
          full_text_query: { q: 1 },
          columns: { column_names: ["a"], double_x: "x * 2" },
          alterations: [{ path: "a" }, { path: "b", data_typ: {} }],
          order: { by: "x", asc: true },
        },
        "body",
      ),
    ).toEqual(["body.full_text_query", "body.columns.double_x", "body.alterations[1].data_typ", "body.order.asc"]);
  });

  it("leaves values that fit no branch, or are not objects, to the parser", () => {
    expect(unknownFields(schema, { columns: 5, alterations: "x", filter: { a: 1 } }, "body")).toEqual([]);
  });

  it("names a field set that the schema takes only to refuse, with its reason, and lets it pass unset or empty", () => {
    const columns = z.object({ new_columns: z.array(z.object({ name: z.string(), computed: unsupported("no computed columns") })) });
    expect(fieldIssues(columns, { new_columns: [{ name: "a" }, { name: "b", computed: null }, { name: "c", computed: {} }] }, "body")).toEqual({
      unknown: [],
      unsupported: [],
    });
    expect(fieldIssues(columns, { new_columns: [{ name: "a" }, { name: "b", computed: { udf: "x" }, typo: 1 }] }, "body")).toEqual({
      unknown: ["body.new_columns[1].typo"],
      unsupported: [{ path: "body.new_columns[1].computed", reason: "no computed columns" }],
    });
  });
});
