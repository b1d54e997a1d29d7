import { z } from "zod";
import { invalidInput } from "@/server/errors";
import { json, pageLimit, pageQuery, route, qBool, remoteDialect } from "@/server/http/route";
import { restoreVersion } from "@/server/tables/writes";
import { branchField, branchQuery, context, delimiterQuery, requestBase, versionAnswer, versionResponse, pageToken } from "@/lib/contract/common";
import { tableVersion, tagMap, tagsPage, versionsResponse } from "@/lib/contract/catalog";
import { changedRows, tableChanges, type ChangeEnds } from "@/server/tables/changes";
import { changedRowsRequest, changesRequest, tableChanges as tableChangesAnswer } from "@/lib/contract/changes";
import { createBranch, createTag, deleteBranch, deleteTag, listBranches, listTags, tagVersion, updateTag } from "@/server/tables/refs";
import { createTableVersion, deleteTableVersions, describeTableVersion, listVersions, type NewTableVersion } from "@/server/tables/versions";
import { createdVersion, deletedVersions, tableVersionFields, versionRangesFields } from "@/lib/contract/table-changes";
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

const tagBody = { ...requestBase, tag: z.string().min(1), branch: z.string().nullish() };

function endsOf(body: z.output<typeof changesRequest>): ChangeEnds {
  if (body.from_version != null && body.from_tag != null) throw invalidInput("give from_version or from_tag, not both");
  if (body.to_version != null && body.to_tag != null) throw invalidInput("give to_version or to_tag, not both");
  const from = body.from_tag != null ? { tag: body.from_tag } : body.from_version != null ? { version: body.from_version } : undefined;
  return { from, to: body.to_tag != null ? { tag: body.to_tag } : { version: body.to_version ?? undefined } };
}

export const versionRoutes = [
  route({
    operationId: "ListTableVersions",
    summary: "List the versions of a table with their metadata, paged",
    group: "Versions and tags",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/version/list",
    access: { need: "viewer", on: "table" },
    query: z.object({
      ...delimiterQuery,
      ...branchQuery,
      ...pageQuery,
      descending: qBool("Latest first when true"),
      include_operations: qBool("Quiver: add each version's operation (Append, Overwrite, Update, Project, Restore, ...)"),
    }),
    body: { kind: "json", schema: z.object(requestBase) },
    response: versionsResponse,
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
    operationId: "DescribeTableVersion",
    summary: "Describe one version of a table (its latest when none is named): manifest, size, e-tag, time and metadata",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/version/describe",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField, version: z.number().int().min(0).nullish() }) },
    response: z.object({ version: tableVersion, context }),
    handler: async ({ id, body, tables }) =>
      json(await describeTableVersion(tables, id, { version: body.version ?? undefined, branch: body.branch ?? undefined })),
  }),
  route({
    operationId: "CreateTableVersion",
    summary: "Commit a version from a manifest staged in the table's directory; 409 if that version exists",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/version/create",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...tableVersionFields,
      }),
    },
    response: createdVersion,
    handler: async ({ id, body, tables, auditDetail, committed }) => {
      const { created, what } = await createTableVersion(tables, id, newTableVersion(body));
      auditDetail(what);
      committed({ table: id, version: created.version.version, branch: body.branch ?? undefined, detail: what });
      return json(created);
    },
  }),
  route({
    operationId: "BatchDeleteTableVersions",
    summary: "Delete the manifests of versions in ranges (the latest and tagged versions are refused)",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/version/delete",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...versionRangesFields,
      }),
    },
    response: deletedVersions,
    handler: async ({ id, body, tables }) => json(await deleteTableVersions(tables, id, versionRanges(body.ranges), body.branch ?? undefined)),
  }),
  route({
    operationId: "ListTableTags",
    summary: "List the tags of a table and the versions they point to",
    group: "Versions and tags",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/tags/list",
    access: { need: "viewer", on: "table" },
    query: z.object({ ...delimiterQuery, ...pageQuery }),
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.union([tagsPage, tagMap.describe("LanceDB's remote client (a path with a trailing slash) reads the bare map of tags")]),
    handler: async ({ id, query, tables, request }) => {
      const page = await listTags(tables, id, { pageToken: query.page_token, limit: pageLimit(query.limit) });
      // LanceDB's remote client reads the tag list as a bare map of tags, with no other keys.
      return remoteDialect(request) ? { ...json(page.tags), bare: true } : json(page);
    },
  }),
  route({
    operationId: "GetTableTagVersion",
    summary: "Get the version a tag points to",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/tags/version",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(tagBody) },
    response: z.object({ ...versionResponse, branch: z.string().nullable().describe("The branch the tagged version is on; null for main") }),
    handler: async ({ id, body, tables }) => json(await tagVersion(tables, id, body.tag, body.branch ?? undefined)),
  }),
  route({
    operationId: "CreateTableTag",
    summary: "Create a tag at a version",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/tags/create",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...tagBody, version: z.number().int().min(0) }) },
    response: z.object({ context }),
    handler: async ({ id, body, tables }) => json(await createTag(tables, id, body.tag, body.version, body.branch ?? undefined)),
  }),
  route({
    operationId: "UpdateTableTag",
    summary: "Move an existing tag to another version",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/tags/update",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...tagBody, version: z.number().int().min(0) }) },
    response: z.object({ context }),
    handler: async ({ id, body, tables }) => json(await updateTag(tables, id, body.tag, body.version, body.branch ?? undefined)),
  }),
  route({
    operationId: "DeleteTableTag",
    summary: "Delete a tag",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/tags/delete",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(tagBody) },
    response: z.object({ context }),
    handler: async ({ id, body, tables }) => json(await deleteTag(tables, id, body.tag, body.branch ?? undefined)),
  }),
  route({
    operationId: "ListTableBranches",
    summary: "List the branches of a table",
    group: "Versions and tags",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/branches/list",
    access: { need: "viewer", on: "table" },
    query: z.object({ ...delimiterQuery, ...pageQuery }),
    body: { kind: "json", schema: z.object({ ...requestBase, page_token: z.string().nullish(), limit: z.number().int().min(1).nullish() }) },
    response: z.object({
      branches: z.record(
        z.string(),
        z.object({
          parentBranch: z.string().nullable(),
          parentVersion: z.number().int(),
          createAt: z.number().int().describe("Seconds since the epoch"),
          manifestSize: z.number().int(),
          metadata: z.record(z.string(), z.string()),
        }),
      ),
      page_token: pageToken,
      context,
    }),
    handler: async ({ id, body, query, tables }) =>
      json(await listBranches(tables, id, { pageToken: body.page_token ?? query.page_token, limit: pageLimit(body.limit ?? query.limit) })),
  }),
  route({
    operationId: "CreateTableBranch",
    summary: "Create a branch from main or another branch, at its latest or a given version",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/branches/create",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, name: z.string().min(1), from_branch: z.string().nullish(), from_version: z.number().int().min(0).nullish() }),
    },
    response: versionAnswer,
    handler: async ({ id, body, tables }) => json(await createBranch(tables, id, body.name, body.from_branch ?? undefined, body.from_version ?? undefined)),
  }),
  route({
    operationId: "DeleteTableBranch",
    summary: "Delete a branch",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/branches/delete",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, name: z.string().min(1) }) },
    response: z.object({ context }),
    handler: async ({ id, body, tables }) => json(await deleteBranch(tables, id, body.name)),
  }),
  route({
    operationId: "RestoreTable",
    summary: "Restore a table to an earlier version, as a new version",
    group: "Versions and tags",
    methods: ["POST"],
    path: "/v1/table/{id}/restore",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, version: z.number().int().min(0), branch: z.string().nullish() }) },
    response: versionAnswer,
    commits: true,
    handler: async ({ id, body, tables }) => json(await restoreVersion(tables, id, body.version, body.branch ?? undefined)),
  }),
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
