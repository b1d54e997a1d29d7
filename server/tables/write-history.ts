/**
 * Whether a write whose instance stopped before answering committed, and at which version, read from the table's
 * history. Its claim says what the commit would look like: the version it builds on, the Lance operations its
 * transaction may record and, for appends, how many rows it adds. Every commit Quiver answers leaves a version
 * record naming the commit (version-authors.ts), so the versions above the claim's that no record names are the
 * ones to look at: exactly one of them looking like the claimed commit is it, none means it did not land, and more
 * than one cannot be told apart (the request is then answered so, never committed twice). Only versions made while
 * the attempt could commit count, read on the claiming machine's clock: after its claim (a commit's manifest reads a
 * later millisecond than its claim, so the commit its instance made just before, unrecorded because the instance
 * died, is never taken for it), and no later than a lease after the attempt last renewed its lease (so a version
 * another instance made after the attempt's instance died, and died itself before recording, is not taken for it
 * either). A version that looks like it but is younger than a lease may be another instance's commit whose record is
 * still being written: the decision waits for it.
 */
import "server-only";
import { config } from "@/server/config";
import { log } from "@/server/log";
import type { ArrowBody } from "@/server/lance/arrow-ipc";
import { fragmentsIn } from "@/server/lance/version-changes";
import type { ManifestSource, TableFiles } from "@/server/lance/table-files";
import type { ObjectStore } from "@/server/storage/object-store";
import { commitsRecorded, recordDecided } from "./version-authors";
import type { ClaimRecord, Decided, Verdict } from "./write-ledger";

/** How far a claim of an earlier release, which did not wait for the clock, let its manifest's time read before its own. */
const EARLIER_RELEASE_CLOCK_STEP_MS = 5;

/** Lance's operations that only Quiver's maintenance and index builds commit, never a write of a request. */
const NOT_A_WRITE = new Set(["ReserveFragments", "Rewrite", "CreateIndex"]);

/** What the history is read through: the store of the records, a table's own files by its location, and its rows. */
export interface History {
  records: ObjectStore;
  filesAt(location: string): TableFiles;
  /** The signatures (row-signatures.ts) of the rows of a version of the table's main branch in fragments from `first` on. */
  rowSignaturesAt(location: string, version: number, first: number, columns: string[]): Promise<Set<string>>;
  /** The signatures of a request body's rows. */
  bodySignatures(file: Buffer, columns: string[]): Promise<Set<string>>;
}

/** A version's row count and fragments, from its manifest; null when the version is not in the listing. */
async function versionContent(files: TableFiles, sources: Map<number, ManifestSource>, version: number) {
  const source = sources.get(version);
  if (!source) return null;
  const { file, summary } = await files.manifest(version, source);
  const content = await files.read(file.key);
  return { rows: Number(summary.metadata.total_rows ?? 0), fragments: content ? fragmentsIn(content) : [] };
}

/** A version's content and the one's before it, with the fragments the version added. */
async function versionAndBefore(files: TableFiles, sources: Map<number, ManifestSource>, version: number) {
  const [before, after] = await Promise.all([versionContent(files, sources, version - 1), versionContent(files, sources, version)]);
  const old = new Set((before?.fragments ?? []).map((f) => f.id));
  return { before, after, added: (after?.fragments ?? []).filter((f) => !old.has(f.id)) };
}

/** Rows a version held, rows written into fragments it added, from its manifest and the previous one's. */
async function rowCounts(files: TableFiles, sources: Map<number, ManifestSource>, version: number) {
  const { before, after, added } = await versionAndBefore(files, sources, version);
  return { before: before?.rows ?? 0, after: after?.rows ?? 0, written: added.reduce((sum, f) => sum + f.liveRows, 0) };
}

/**
 * Whether a version of the main branch holds every row of an insert's body in the fragments it added: false for
 * another write's commit of the same shape, null when that cannot be read (the version before it is gone, or the
 * engine cannot read it), which leaves the shape alone to decide.
 */
async function holdsRows(history: History, files: TableFiles, sources: Map<number, ManifestSource>, version: number, claim: ClaimRecord, body: BodyRows) {
  try {
    const { before, after, added } = await versionAndBefore(files, sources, version);
    if (!before || !after) return null;
    if (added.length === 0) return false;
    const own = await body.signatures();
    // An append's fragments take the next ids: they are the version's highest.
    const held = await history.rowSignaturesAt(claim.shape.location, version, Math.min(...added.map((f) => f.id)), body.columns);
    return [...own].every((row) => held.has(row));
  } catch (err) {
    log.warn({ err, version, request_id: claim.requestId }, "the rows of a version a stopped write may have made could not be read");
    return null;
  }
}

/** An insert's body, its rows' signatures read once however many versions they are looked for in. */
interface BodyRows {
  columns: string[];
  signatures(): Promise<Set<string>>;
}

function bodyRows(history: History, body: ArrowBody): BodyRows {
  const columns = body.schema.fields.map((f) => f.name);
  let read: Promise<Set<string>> | undefined;
  return { columns, signatures: () => (read ??= history.bodySignatures(body.file, columns)) };
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

/** Decides a stopped attempt's commit from the table's history; `lastSign` is when the attempt last showed it was alive. */
export async function decideFromHistory(history: History, claim: ClaimRecord, lastSign: number, body: ArrowBody | null = null): Promise<Verdict> {
  const { shape } = claim;
  if (shape.undecidable) return { undecidable: shape.undecidable };
  const files = history.filesAt(shape.location);
  const { sources } = await files.versions(shape.directory);
  if (shape.named) {
    // Its commit names it in the version it makes: the version is read, not inferred.
    const since = claim.since ?? shape.after;
    const version = await files.versionNaming(shape.directory, claim.key, since, Infinity, sources);
    if (version === null) return { landed: null, why: `no version above ${since} names the request` };
    return { landed: { version, counts: await countsOf(files, sources, version, claim) }, why: `version ${version} names the request` };
  }
  /** The commit is this version: its record now names it, so that no later decision takes the version for another's. */
  const landed = async (version: number, why: string): Promise<Verdict> => {
    const made = await files.manifest(version, sources.get(version)!);
    await recordDecided(history.records, claim, version, made.summary.timestampMillis);
    return { landed: { version, counts: await countsOf(files, sources, version, claim) }, why };
  };
  const recorded = await commitsRecorded(history.records, shape.location, shape.branch, shape.after);
  for (const [version, commit] of recorded) {
    if (commit === shape.commit && sources.has(version))
      return { landed: { version, counts: await countsOf(files, sources, version, claim) }, why: `version ${version}'s record names the commit` };
  }

  if (shape.version) {
    // A named version: it is this commit's if its manifest is the one the commit published.
    const source = sources.get(shape.version.number);
    if (!source) return { landed: null, why: `version ${shape.version.number} does not exist` };
    if (recorded.has(shape.version.number)) return { landed: null, why: `version ${shape.version.number}'s record names another commit` };
    const [published, staged] = await Promise.all([
      files.read((await files.manifest(shape.version.number, source)).file.key),
      files.read(shape.version.staged),
    ]);
    if (published && staged)
      return published.equals(staged)
        ? landed(shape.version.number, `version ${shape.version.number} is the manifest the write staged`)
        : { landed: null, why: `version ${shape.version.number} is another manifest than the one the write staged` };
    return { undecidable: `version ${shape.version.number} exists, and the manifest the write staged is gone, so whose it is cannot be read` };
  }

  // The rows of an insert to the main branch, where the request asking sent them: no other write's version holds them.
  const ownRows = body && claim.operation === "InsertIntoTable" && shape.branch === null ? bodyRows(history, body) : null;
  const unrecorded = [...sources.keys()].filter((v) => v > shape.after && !recorded.has(v)).sort((a, b) => a - b);
  const alike: Array<{ version: number; time: number }> = [];
  const claimed = Date.parse(claim.time);
  /** The earliest time the commit's manifest can read (a claim of an earlier release allowed for a clock step). */
  const madeAfter = claim.committedAfterTime ? claimed + 1 : claimed - EARLIER_RELEASE_CLOCK_STEP_MS;
  /** The latest: its instance renews the attempt's lease while it lives, so it was gone a lease after its last renewal. */
  const madeBy = claim.leaseMs ? lastSign + claim.leaseMs : Infinity;
  for (const version of unrecorded) {
    const source = sources.get(version)!;
    const made = await files.manifest(version, source);
    // The commit's manifest is made in a later millisecond than its claim, on the same machine's clock (the ledger
    // waits for the clock to move on after a claim): one made in the claim's millisecond or before is another's,
    // such as the commit its instance made just before, whose record its death kept from being written. And it is
    // made while its instance lives: one made a lease after the attempt's last sign is another instance's, one that
    // died after it, say, before recording it.
    if (made.summary.timestampMillis < madeAfter || made.summary.timestampMillis > madeBy) continue;
    const done = await files.operation(version, source, made, sources.get(version - 1));
    if (done) {
      if (NOT_A_WRITE.has(done.operation)) continue;
      if (shape.operations && !shape.operations.includes(done.operation)) continue;
      if (shape.rows && done.rows !== undefined && (done.rows < shape.rows.min || done.rows > shape.rows.max)) continue;
    }
    // Another append of as many rows made in the attempt's time looks the same: its rows are another body's.
    if (ownRows && (await holdsRows(history, files, sources, version, claim, ownRows)) === false) continue;
    alike.push({ version, time: made.summary.timestampMillis });
  }
  if (alike.length === 0) return { landed: null, why: `no version above ${shape.after} looks like the commit (${unrecorded.length} without a record)` };
  const young = alike.filter((v) => v.time > Date.now() - 2 * config.writeLeaseMs);
  if (young.length) return { wait: `version ${young[0].version} was committed moments ago and its record may still be coming` };
  if (alike.length === 1)
    return landed(alike[0].version, `version ${alike[0].version} is the one version above ${shape.after} without a record that looks like the commit`);
  return {
    undecidable: `versions ${alike.map((v) => v.version).join(", ")} each look like the write's commit, and none names it; look at the table's versions before sending the write again under a new request id`,
  };
}
