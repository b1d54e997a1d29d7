/**
 * What one version of a dataset changed, in terms of its fragments, read from its manifest and the transaction the
 * manifest names: which fragments an append (or an update) added, which a compaction rewrote into which. A reader
 * that already holds a dataset's rows can then follow later versions by reading only the fragments they added,
 * where reading every row again costs the whole dataset. Only V2 manifest names (the catalog's) are read.
 */
import "server-only";
import { fromBinary } from "@bufbuild/protobuf";
import { QuiverError } from "@/server/errors";
import type { ObjectStore } from "@/server/storage/object-store";
import { ManifestSchema, TransactionSchema } from "./proto/lance_format_pb";
import { manifestKey, manifestMessage } from "./version-manifest";

export interface FragmentRows {
  id: number;
  /** Rows the fragment holds that no deletion file removes. */
  liveRows: number;
  /** Which deletion file applies ("" for none): it changes whenever rows of the fragment are deleted. */
  deletions: string;
}

/**
 * What kind of change a version made: rows added in new fragments (an append), rows rewritten into new fragments
 * unchanged (a compaction), rows written into new fragments with the rows they replace deleted where they were (an
 * update or a merge-insert: one that only inserted deleted nothing), nothing about the rows (an index built, a
 * configuration), or anything else (rows removed, columns changed in place). Which fragments came and went, and
 * which lost rows, is told by the fragment lists of the version and the one before: a transaction names its new
 * fragments before the commit gives them their ids.
 */
export type ChangeKind = "added" | "rewritten" | "updated" | "none" | "other";

function readManifest(file: Buffer) {
  const manifest = fromBinary(ManifestSchema, manifestMessage(file).message);
  const fragments = manifest.fragments.map((f) => ({
    id: Number(f.id),
    liveRows: Number(f.physicalRows) - Number(f.deletionFile?.numDeletedRows ?? 0),
    deletions: f.deletionFile ? `${f.deletionFile.readVersion}-${f.deletionFile.id}` : "",
  }));
  return { manifest, fragments };
}

/** The fragments a manifest file names. */
export const fragmentsIn = (file: Buffer): FragmentRows[] => readManifest(file).fragments;

/** The fragments a version is made of. */
export async function fragmentsAt(store: ObjectStore, directory: string, version: number): Promise<FragmentRows[]> {
  const file = await store.get(manifestKey(directory, version, true));
  // Pruned by a compaction since it was found to be the latest: asking again finds the version after it.
  if (!file) throw new QuiverError("ServiceUnavailable", `version ${version} of '${directory}' went away while it was read; try again`);
  return readManifest(file).fragments;
}

/** A version's kind of change and the fragments it is made of; null when its manifest or transaction cannot be read. */
export async function versionChange(store: ObjectStore, directory: string, version: number): Promise<{ kind: ChangeKind; fragments: FragmentRows[] } | null> {
  const file = await store.get(manifestKey(directory, version, true));
  if (!file) return null;
  const { manifest, fragments } = readManifest(file);
  if (!manifest.transactionFile) return null;
  const content = await store.get(`${directory}/_transactions/${manifest.transactionFile}`);
  if (!content) return null;
  const { operation } = fromBinary(TransactionSchema, content);
  const kinds: Record<string, ChangeKind> = { append: "added", rewrite: "rewritten", createIndex: "none", updateConfig: "none", reserveFragments: "none" };
  // Update mode 0 rewrites rows into new fragments; mode 1 rewrites columns of fragments in place.
  const kind = operation.case === "update" ? (operation.value.updateMode === 0 ? "updated" : "other") : (kinds[operation.case ?? ""] ?? "other");
  return { kind, fragments };
}
