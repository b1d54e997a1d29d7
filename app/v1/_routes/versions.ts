/** The routes of a table's versions, tags and branches: list, describe, commit, delete, restore, and what changed. */
import { z } from "zod";
import { invalidInput } from "@/server/errors";
import { json, pageLimit, route, remoteDialect } from "@/server/http/route";
import { restoreVersion } from "@/server/tables/writes";
import { changedRows, tableChanges, type ChangeEnds } from "@/server/tables/changes";
import { changesRequest } from "@/lib/contract/changes";
import { createBranch, createTag, deleteBranch, deleteTag, listBranches, listTags, tagVersion, updateTag } from "@/server/tables/refs";
import { createTableVersion, deleteTableVersions, describeTableVersion, listVersions, type NewTableVersion } from "@/server/tables/versions";
import { tableVersionFields } from "@/lib/contract/table-changes";
import { versionOperations as ops } from "@/lib/contract/operations/versions";

/** A CreateTableVersion request, alone or as an entry of a batch, as the version operations take it. */
export function newTableVersion(body: z.output<z.ZodObject<typeof tableVersionFields>>): NewTableVersion {
  return {
    version: body.version,
    manifestPath: body.manifest_path,
    manifestSize: body.manifest_size ?? undefined,
    eTag: body.e_tag ?? undefined,
    metadata: body.metadata ?? undefined,
    namingScheme: body.naming_scheme ?? undefined,
    branch: body.branch ?? undefined,
  };
}

export const versionRanges = (ranges: Array<{ start_version: number; end_version: number }>) =>
  ranges.map((r) => ({ start: r.start_version, end: r.end_version }));

function endsOf(body: z.output<typeof changesRequest>): ChangeEnds {
  if (body.from_version != null && body.from_tag != null) throw invalidInput("give from_version or from_tag, not both");
  if (body.to_version != null && body.to_tag != null) throw invalidInput("give to_version or to_tag, not both");
  const from = body.from_tag != null ? { tag: body.from_tag } : body.from_version != null ? { version: body.from_version } : undefined;
  return { from, to: body.to_tag != null ? { tag: body.to_tag } : { version: body.to_version ?? undefined } };
}

export const versionRoutes = [
  route({
    ...ops.ListTableVersions,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, query, tables }) =>
      json(
        await listVersions(tables, id, {
          pageToken: query.page_token,
          limit: pageLimit(query.limit),
          descending: query.descending ?? false,
          branch: query.branch || undefined,
          withOperations: query.include_operations ?? false,
        }),
      ),
  }),
  route({
    ...ops.DescribeTableVersion,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, tables }) =>
      json(await describeTableVersion(tables, id, { version: body.version ?? undefined, branch: body.branch ?? undefined })),
  }),
  route({
    ...ops.CreateTableVersion,
    access: { need: "editor", on: "table" },
    once: {
      scope: "table",
      decided: async ({ version }, { id, body, tables }) => json(await describeTableVersion(tables, id, { version, branch: body.branch ?? undefined })),
    },
    handler: async ({ id, body, tables, auditDetail, committed, alongside }) => {
      const { created, what, tidy } = await createTableVersion(tables, id, newTableVersion(body));
      auditDetail(what);
      committed({ table: id, version: created.version.version, branch: body.branch ?? undefined, detail: what });
      alongside(tidy);
      return json(created);
    },
  }),
  route({
    ...ops.BatchDeleteTableVersions,
    access: { need: "admin", on: "table" },
    handler: async ({ id, body, tables }) => json(await deleteTableVersions(tables, id, versionRanges(body.ranges), body.branch ?? undefined)),
  }),
  route({
    ...ops.ListTableTags,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, query, tables, request }) => {
      const page = await listTags(tables, id, { pageToken: query.page_token, limit: pageLimit(query.limit) });
      // LanceDB's remote client reads the tag list as a bare map of tags, with no other keys.
      return remoteDialect(request) ? { ...json(page.tags), bare: true } : json(page);
    },
  }),
  route({
    ...ops.GetTableTagVersion,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, tables }) => json(await tagVersion(tables, id, body.tag, body.branch ?? undefined)),
  }),
  route({
    ...ops.CreateTableTag,
    access: { need: "editor", on: "table" },
    handler: async ({ id, body, tables }) => json(await createTag(tables, id, body.tag, body.version, body.branch ?? undefined)),
  }),
  route({
    ...ops.UpdateTableTag,
    access: { need: "editor", on: "table" },
    handler: async ({ id, body, tables }) => json(await updateTag(tables, id, body.tag, body.version, body.branch ?? undefined)),
  }),
  route({
    ...ops.DeleteTableTag,
    access: { need: "editor", on: "table" },
    handler: async ({ id, body, tables }) => json(await deleteTag(tables, id, body.tag, body.branch ?? undefined)),
  }),
  route({
    ...ops.ListTableBranches,
    access: { need: "viewer", on: "table" },
    handler: async ({ id, body, query, tables }) =>
      json(await listBranches(tables, id, { pageToken: body.page_token ?? query.page_token, limit: pageLimit(body.limit ?? query.limit) })),
  }),
  route({
    ...ops.CreateTableBranch,
    access: { need: "editor", on: "table" },
    handler: async ({ id, body, tables }) => json(await createBranch(tables, id, body.name, body.from_branch ?? undefined, body.from_version ?? undefined)),
  }),
  route({
    ...ops.DeleteTableBranch,
    access: { need: "editor", on: "table" },
    handler: async ({ id, body, tables }) => json(await deleteBranch(tables, id, body.name)),
  }),
  route({
    ...ops.RestoreTable,
    access: { need: "editor", on: "table" },
    commits: true,
    once: { scope: "table", decided: async ({ version }) => json({ version }) },
    handler: async ({ id, body, tables }) => json(await restoreVersion(tables, id, body.version, body.branch ?? undefined)),
  }),
  route({
    ...ops.DescribeTableChanges,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, tables }) => json(await tableChanges(tables, id, endsOf(body))),
  }),
  route({
    ...ops.ListTableChangedRows,
    access: { need: "viewer", on: "table" },
    heavy: true,
    handler: async ({ id, body, tables }) => ({
      kind: "arrow-file",
      body: await changedRows(tables, id, endsOf(body), body.kind, { limit: body.limit ?? 50, offset: body.offset ?? 0, rowIds: body.row_ids ?? undefined }),
    }),
  }),
];
