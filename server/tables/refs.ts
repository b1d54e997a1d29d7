/** A table's tags and branches: listing with Lance's own ref files, creating, moving and deleting them. */
import "server-only";
import { QuiverError, invalidInput } from "@/server/errors";
import { engineCall } from "@/server/lance/native";
import { pageOf } from "@/server/catalog/paging";
import type { Id } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import type { Tables } from "./tables";
import { namedBranch } from "./branch-name";

async function tagsOf(tables: Tables, id: Id, branch?: string) {
  const { entry, table } = await tables.dataHandle(id, "have tags", branch);
  return { entry, tags: await engineCall("read tags", () => table.tags()) };
}

export async function listTags(tables: Tables, id: Id, options: { pageToken?: string; limit: number }) {
  const entry = await tables.resolve(id);
  if (await tables.isDeclaredOnly(entry)) return { tags: {}, page_token: undefined };
  const { tags } = await tagsOf(tables, id);
  const all = await engineCall("list tags", () => tags.list());
  const page = await pageOf(Object.keys(all).sort(), options.pageToken, options.limit);
  const refs = await tables.filesOf(entry).tagRefs(page.items);
  const out: Record<string, { version: number; manifestSize: number; branch: string | null }> = {};
  for (const name of page.items) out[name] = { version: all[name].version, manifestSize: all[name].manifestSize, branch: refs.get(name)?.branch ?? null };
  return { tags: out, page_token: page.pageToken };
}

export async function tagVersion(tables: Tables, id: Id, tag: string, branch?: string) {
  const { entry, tags } = await tagsOf(tables, id, branch);
  const version = await tags.getVersion(tag).catch(() => {
    throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
  });
  const refs = await tables.filesOf(entry).tagRefs([tag]);
  return { version, branch: refs.get(tag)?.branch ?? null };
}

async function requireVersion(tables: Tables, entry: TableEntry, version: number, branch?: string) {
  await tables.readHandle(entry, { version, branch });
}

export async function createTag(tables: Tables, id: Id, tag: string, version: number, branch?: string) {
  const { entry, tags } = await tagsOf(tables, id, branch);
  await requireVersion(tables, entry, version, branch);
  await tables.commitTo(entry, () => engineCall(`create tag '${tag}'`, () => tags.create(tag, version)));
  return {};
}

export async function updateTag(tables: Tables, id: Id, tag: string, version: number, branch?: string) {
  const { entry, tags } = await tagsOf(tables, id, branch);
  const all = await engineCall("list tags", () => tags.list());
  if (!(tag in all)) throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
  await requireVersion(tables, entry, version, branch);
  await tables.commitTo(entry, () => engineCall(`update tag '${tag}'`, () => tags.update(tag, version)));
  return {};
}

export async function deleteTag(tables: Tables, id: Id, tag: string, branch?: string) {
  const { entry, tags } = await tagsOf(tables, id, branch);
  const all = await engineCall("list tags", () => tags.list());
  if (!(tag in all)) throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
  await tables.commitTo(entry, () => engineCall(`delete tag '${tag}'`, () => tags.delete(tag)));
  return {};
}

async function branchesOf(tables: Tables, id: Id) {
  const { entry, table } = await tables.dataHandle(id, "have branches");
  return { entry, branches: await engineCall("read branches", () => table.branches()) };
}

export async function listBranches(tables: Tables, id: Id, options: { pageToken?: string; limit: number }) {
  const { entry, branches } = await branchesOf(tables, id);
  const all = await engineCall("list branches", () => branches.list());
  const page = await pageOf(Object.keys(all).sort(), options.pageToken, options.limit);
  const refs = await tables.filesOf(entry).branchRefs(page.items);
  return {
    branches: Object.fromEntries(
      page.items.map((name) => {
        const b = all[name];
        const ref = refs.get(name);
        return [
          name,
          {
            parentBranch: b.parentBranch ?? null,
            parentVersion: b.parentVersion,
            createAt: ref?.createAt ?? 0,
            manifestSize: b.manifestSize,
            metadata: ref?.metadata ?? {},
          },
        ];
      }),
    ),
    page_token: page.pageToken,
  };
}

/**
 * Lance's rule for branch names: `/`-separated segments of letters, digits, `.`, `-` and `_`, with no `..`. It is
 * checked here because the engine writes a new branch's files under `tree/<name>` before it checks the name.
 */
const BRANCH_SEGMENT = /^[\p{Alphabetic}\p{N}._-]+$/u;

export function branchNameProblem(name: string): string | null {
  if (name.includes("..")) return "it contains '..'";
  const bad = name.split("/").find((segment) => segment === "." || !BRANCH_SEGMENT.test(segment));
  if (bad === undefined) return null;
  return bad === "" ? "it has an empty segment (a leading, trailing or doubled '/')" : `segment '${bad}' is not letters, digits, '.', '-' and '_'`;
}

export async function createBranch(tables: Tables, id: Id, name: string, fromBranch?: string, fromVersion?: number) {
  const problem = branchNameProblem(name);
  if (problem) throw invalidInput(`'${name}' is not a valid branch name: ${problem}`);
  const { entry, branches } = await branchesOf(tables, id);
  const all = await engineCall("list branches", () => branches.list());
  if (name === "main" || name in all) throw new QuiverError("TableBranchAlreadyExists", `branch '${name}' already exists on table '${entry.objectId}'`);
  const from = namedBranch(fromBranch);
  if (from !== null && !(from in all)) throw new QuiverError("TableBranchNotFound", `branch '${from}' does not exist`);
  if (fromVersion !== undefined) await requireVersion(tables, entry, fromVersion, fromBranch);
  const created = await tables.commitTo(entry, () => engineCall(`create branch '${name}'`, () => branches.create(name, from, fromVersion ?? null)));
  return { version: await created.version() };
}

export async function deleteBranch(tables: Tables, id: Id, name: string) {
  const { entry, branches } = await branchesOf(tables, id);
  const all = await engineCall("list branches", () => branches.list());
  if (!(name in all)) throw new QuiverError("TableBranchNotFound", `branch '${name}' does not exist on table '${entry.objectId}'`);
  await tables.commitTo(entry, () => engineCall(`delete branch '${name}'`, () => branches.delete(name)));
  return {};
}
