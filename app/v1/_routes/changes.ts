import { z } from "zod";
import { invalidInput } from "@/server/errors";
import { json, route } from "@/server/http/route";
import { changedRows, tableChanges, type ChangeEnds } from "@/server/tables/changes";
import { changedRowsRequest, changesRequest, tableChanges as tableChangesAnswer } from "@/lib/contract/changes";
import { delimiterQuery } from "@/lib/contract/common";

function endsOf(body: z.output<typeof changesRequest>): ChangeEnds {
  if (body.from_version != null && body.from_tag != null) throw invalidInput("give from_version or from_tag, not both");
  if (body.to_version != null && body.to_tag != null) throw invalidInput("give to_version or to_tag, not both");
  const from = body.from_tag != null ? { tag: body.from_tag } : body.from_version != null ? { version: body.from_version } : undefined;
  return { from, to: body.to_tag != null ? { tag: body.to_tag } : { version: body.to_version ?? undefined } };
}

export const changeRoutes = [
  route({
    operationId: "DescribeTableChanges",
    summary:
      "What changed between two versions or tags of a table: schema changes, row counts from the manifests, and for a table with stable row ids how many rows were inserted, updated and deleted",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/changes",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: changesRequest },
    response: tableChangesAnswer,
    handler: async ({ id, body, tables }) => json(await tableChanges(tables, id, endsOf(body))),
  }),
  route({
    operationId: "ListTableChangedRows",
    summary:
      "A page of the rows two versions of a table with stable row ids inserted or updated (at the later version, with _rowid), or rows as they were at the earlier version; answers an Arrow IPC file",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/changes/rows",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: changedRowsRequest },
    response: "arrow-file",
    handler: async ({ id, body, tables }) => ({
      kind: "arrow-file",
      body: await changedRows(tables, id, endsOf(body), body.kind, { limit: body.limit ?? 50, offset: body.offset ?? 0, rowIds: body.row_ids ?? undefined }),
    }),
  }),
];
