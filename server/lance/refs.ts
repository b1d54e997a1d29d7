/**
 * Lance keeps each tag and branch of a dataset as a JSON file under `_refs/`, named by the percent-encoded ref name.
 * The engine's JavaScript API leaves out fields of these files that clients of the REST interface read (a tag's
 * branch, a branch's creation time and metadata), so they are read here from the files themselves.
 */
import "server-only";
import type { ObjectStore } from "@/server/storage/object-store";

export interface TagRef {
  branch: string | null;
  version: number;
}

export interface BranchRef {
  createAt: number;
  metadata: Record<string, string>;
  /** The branch and version it was made from (null: main). */
  parentBranch: string | null;
  parentVersion: number;
}

const branchName = (value: unknown) => (typeof value === "string" && value !== "main" ? value : null);
const count = (value: unknown) => (typeof value === "number" ? value : 0);

type RefKind = "tags" | "branches";

function nameOf(key: string): string | null {
  const file = key.slice(key.lastIndexOf("/") + 1);
  if (!file.endsWith(".json")) return null;
  try {
    return decodeURIComponent(file.slice(0, -".json".length));
  } catch {
    return null;
  }
}

/** The ref files of one kind, by ref name, for the names asked for (all when `names` is absent). */
async function readRefs(store: ObjectStore, location: string, kind: RefKind, names?: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const wanted = names ? new Set(names) : null;
  const keys = (await store.list(`${location}/_refs/${kind}/`)).flatMap((key) => {
    const name = nameOf(key);
    return name !== null && (!wanted || wanted.has(name)) ? [[name, key] as const] : [];
  });
  const read = await Promise.all(
    keys.map(async ([name, key]) => {
      const body = await store.get(key);
      if (!body) return null;
      try {
        const parsed: unknown = JSON.parse(body.toString("utf8"));
        return parsed && typeof parsed === "object" ? ([name, parsed as Record<string, unknown>] as const) : null;
      } catch {
        return null;
      }
    }),
  );
  return new Map(read.filter((entry) => entry !== null));
}

const stringMap = (value: unknown): Record<string, string> =>
  value && typeof value === "object" ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string")) : {};

export async function readTagRefs(store: ObjectStore, location: string, names?: readonly string[]): Promise<Map<string, TagRef>> {
  const refs = await readRefs(store, location, "tags", names);
  return new Map([...refs].map(([name, ref]) => [name, { branch: branchName(ref.branch), version: count(ref.version) }]));
}

export async function readBranchRefs(store: ObjectStore, location: string, names?: readonly string[]): Promise<Map<string, BranchRef>> {
  const refs = await readRefs(store, location, "branches", names);
  return new Map(
    [...refs].map(([name, ref]) => [
      name,
      { createAt: count(ref.createAt), metadata: stringMap(ref.metadata), parentBranch: branchName(ref.parentBranch), parentVersion: count(ref.parentVersion) },
    ]),
  );
}
