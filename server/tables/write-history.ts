/**
 * Whether a write whose instance stopped before answering committed, and at which version, read from records that
 * say so, never inferred. A guarded commit (Tables.guardCommit) names its requests in the version it makes: the
 * version naming the request is its commit, and none naming it means it did not land (the guard keeps it from
 * landing later). A CreateTableVersion claim names the version and the manifest it stages: that version is its commit
 * when its manifest is the staged one. A claim a root's earlier build left names neither: its commit is known only
 * by the version record Quiver wrote once it answered (version-authors.ts); without one, whether it landed cannot be
 * read, and the request is answered so (never committed twice).
 */
import "server-only";
import { fragmentsIn } from "@/server/lance/version-changes";
import type { ManifestSource, TableFiles } from "@/server/lance/table-files";
import type { ObjectStore } from "@/server/storage/object-store";
import { commitsRecorded, recordDecided } from "./version-authors";
import type { ClaimRecord, Decided, Verdict } from "./write-ledger";

/** What the history is read through: the store of the records, and a table's own files by its location. */
export interface History {
  records: ObjectStore;
  filesAt(location: string): TableFiles;
}

/** A version's row count and fragments, from its manifest; null when the version is not in the listing. */
async function versionContent(files: TableFiles, sources: Map<number, ManifestSource>, version: number) {
  const source = sources.get(version);
  if (!source) return null;
  const { file, summary } = await files.manifest(version, source);
  const content = await files.read(file.key);
  return { rows: Number(summary.metadata.total_rows ?? 0), fragments: content ? fragmentsIn(content) : [] };
}

/** Rows a version held, rows written into fragments it added, from its manifest and the previous one's. */
async function rowCounts(files: TableFiles, sources: Map<number, ManifestSource>, version: number) {
  const [before, after] = await Promise.all([versionContent(files, sources, version - 1), versionContent(files, sources, version)]);
  const old = new Set((before?.fragments ?? []).map((f) => f.id));
  const added = (after?.fragments ?? []).filter((f) => !old.has(f.id));
  return { before: before?.rows ?? 0, after: after?.rows ?? 0, written: added.reduce((sum, f) => sum + f.liveRows, 0) };
}

/** What a write's answer counts, as the manifests around the version it made tell it. */
async function countsOf(files: TableFiles, sources: Map<number, ManifestSource>, version: number, claim: ClaimRecord): Promise<Decided["counts"]> {
  if (claim.operation === "InsertIntoTable" || claim.operation === "CreateTable") return { inserted: claim.rows ?? 0, updated: 0, deleted: 0 };
  const { before, after, written } = await rowCounts(files, sources, version);
  if (claim.operation === "DeleteFromTable") return { inserted: 0, updated: 0, deleted: Math.max(0, before - after) };
  if (claim.operation === "UpdateTable") return { inserted: 0, updated: written, deleted: 0 };
  if (claim.operation === "MergeInsertIntoTable") {
    const inserted = Math.max(0, after - before);
    return { inserted, updated: Math.max(0, written - inserted), deleted: Math.max(0, before + inserted - after) };
  }
  return { inserted: 0, updated: 0, deleted: 0 };
}

/** Decides a stopped attempt's commit from the records its table holds: the versions, their records, a staged manifest. */
export async function decideFromHistory(history: History, claim: ClaimRecord): Promise<Verdict> {
  const { shape } = claim;
  if (shape.undecidable) return { undecidable: shape.undecidable };
  // Not to be answered from here: the retry finishes it, publishing what the stopped attempt had not (BatchOfVersions).
  if (shape.batch) return { landed: null, why: "a batch of versions, which its retry finishes: the versions it published are the manifests it staged" };
  const files = history.filesAt(shape.location);
  const { sources } = await files.versions(shape.directory);
  const landedAt = async (version: number, why: string): Promise<Verdict> => ({
    landed: { version, counts: await countsOf(files, sources, version, claim) },
    why,
  });
  if (shape.named) {
    const since = claim.since ?? shape.after;
    const version = await files.versionNaming(shape.directory, claim.key, since, Infinity, sources);
    return version === null ? { landed: null, why: `no version above ${since} names the request` } : landedAt(version, `version ${version} names the request`);
  }
  const recorded = await commitsRecorded(history.records, shape.location, shape.branch, shape.after);
  for (const [version, commit] of recorded) {
    if (commit === shape.commit && sources.has(version)) return landedAt(version, `version ${version}'s record names the commit`);
  }
  if (shape.version) {
    const { number, staged } = shape.version;
    const source = sources.get(number);
    if (!source) return { landed: null, why: `version ${number} does not exist` };
    if (recorded.has(number)) return { landed: null, why: `version ${number}'s record names another commit` };
    const made = await files.manifest(number, source);
    const [published, stagedContent] = await Promise.all([files.read(made.file.key), files.read(staged)]);
    if (!published || !stagedContent)
      return { undecidable: `version ${number} exists, and the manifest the write staged is gone, so whose it is cannot be read` };
    if (!published.equals(stagedContent)) return { landed: null, why: `version ${number} is another manifest than the one the write staged` };
    // Its record now names the commit, so that no later decision takes the version for another's.
    await recordDecided(history.records, claim, number, made.summary.timestampMillis);
    return landedAt(number, `version ${number} is the manifest the write staged`);
  }
  return {
    undecidable:
      "the write was claimed by an earlier build of Quiver, whose commits do not name their requests, and no record names its commit; look at the table's versions before sending the write again under a new request id",
  };
}
