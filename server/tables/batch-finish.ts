/**
 * Finishing a batch from wherever an attempt of it stopped. A batch of staged versions whose instance stopped part-way
 * (it died, or was paused past the write lease) and that no retry has finished: the first reader to meet its hold
 * after the lease finishes it here, as its retry would, so that its versions appear together rather than as the store
 * has them once the hold runs out. Each version still to be published is its staged manifest, written by one
 * create-only write; one already there is taken as the batch's only where it is that very manifest. Nothing is
 * published unless every version of the batch is either its staged manifest already or still free to be it: a batch
 * one of whose versions another commit took stays as it is, held until its hold runs out (and what this finisher
 * published before finding that out is taken back). Should the batch's instance wake, its own create-only writes find
 * the very manifests it was publishing, and it answers as if it had published them (test/client-retries.test.ts). A
 * finished batch's versions are recorded as its caller's, and the batch gets its audit entry, as its own answer would
 * have written them (its record names its caller and commit).
 *
 * A batch that also declares or deregisters tables or deletes versions (BatchChanges) is decided by one catalog
 * commit, which makes its catalog changes together with its row, committed, or makes only its row, aborted
 * (CatalogTable.decideBatch): the first attempt to commit either decides it for all, on any instance, and a later one
 * finds the row. Every attempt of it, its live one, a retry and a reader, runs `settleBatch`, which reserves its
 * declared tables' locations and publishes its versions (held) before the decision, and after it either deletes its
 * versions, marks its deregistered directories and lets its versions appear, or takes back everything it published.
 */
import "server-only";
import type { AuditEntry } from "@/lib/contract/access";
import { formatIdentifier } from "@/lib/identifiers";
import { QuiverError } from "@/server/errors";
import { log } from "@/server/log";
import { releaseBatch, type BatchAuthor, type BatchChanges, type BatchFinisher, type BatchMember } from "@/server/catalog/batch-holds";
import type { BatchState } from "@/server/catalog/catalog-table";
import { manifestKey } from "@/server/lance/version-manifest";
import type { TableEntry } from "@/server/catalog/catalog-table";
import type { TableFiles } from "@/server/lance/table-files";
import type { Id } from "@/server/catalog/catalog";
import type { ObjectStore } from "@/server/storage/object-store";
import { currentWrite } from "./write-ledger";
import { versionAt } from "./branch-name";
import { failpoint, pausepoint } from "@/server/failpoints";
import { pruneAuthors } from "./version-authors";

/** What finishing needs of the tables (Tables, which hands readers this finisher): a table, its files, its write turn. */
export interface FinishingTables {
  readonly records: ObjectStore;
  resolve(id: Id): Promise<TableEntry>;
  filesOf(entry: TableEntry): TableFiles;
  commitTo<T>(entry: TableEntry, commit: (stamp: string) => Promise<T>, options?: { directorySeen?: boolean }): Promise<T>;
  /** Records the finished batch's versions as its caller's and writes its audit entry. */
  recordFinished(author: BatchAuthor, members: BatchMember[]): Promise<void>;
  readonly batchCatalog: BatchCatalog;
}

/** What settling a batch that changes the catalog asks of the catalog (Catalog). */
export interface BatchCatalog {
  /** The batch's decision, as a fresh look at the catalog finds it; undefined while it has none. */
  batchDecision(hold: string): Promise<BatchState | undefined>;
  /** Reserves a declared table's location for the batch; true where the batch (any attempt of it) holds it. */
  reserveForBatch(declare: BatchChanges["declares"][number], hold: string): Promise<boolean>;
  /** Lets go of a location the batch reserved, with what is in it. */
  releaseBatchReservation(declare: BatchChanges["declares"][number], hold: string): Promise<void>;
  decideBatch(hold: string, state: BatchState, changes: BatchChanges): Promise<{ state: BatchState } | { conflict: string }>;
  /** What follows a committed decision in the catalog's tables: each deregistered directory's marker. */
  afterBatchDecided(changes: BatchChanges): Promise<void>;
}

/** The batches this process is finishing, and those it found it could not: each is tried once per process. */
const finishing = new Set<string>();
const unfinishable = new Set<string>();

interface Planned {
  member: BatchMember;
  entry: TableEntry;
  files: TableFiles;
  content: Buffer;
  published: boolean;
}

/** The finisher readers hand a stopped batch to: it runs on its own, outside the reader's request and write turn. */
export function batchFinisher(tables: FinishingTables): BatchFinisher {
  return (batch, members, author, changes) => {
    if (finishing.has(batch) || unfinishable.has(batch)) return;
    finishing.add(batch);
    // Not the reader's request: a write that reads would otherwise claim these commits as its own.
    void currentWrite
      .exit(() => (changes ? finishWithChanges(tables, batch, members, author, changes) : finish(tables, batch, members, author)))
      .then((finished) => {
        if (!finished) unfinishable.add(batch);
      })
      .catch((err: unknown) => log.error({ err, batch }, "finishing a batch whose instance stopped part-way failed"))
      .finally(() => finishing.delete(batch));
  };
}

async function finish(tables: FinishingTables, batch: string, members: BatchMember[], author: BatchAuthor | null): Promise<boolean> {
  const plan: Planned[] = [];
  for (const member of members) {
    const planned = await planOf(tables, member);
    if (typeof planned === "string") return gaveUp(batch, member, planned);
    plan.push(planned);
  }
  const mine: Planned[] = [];
  for (const step of plan.filter((p) => !p.published)) {
    try {
      if (await publish(tables, step)) mine.push(step);
    } catch (err) {
      await takeBack(tables, mine);
      return gaveUp(batch, step.member, err instanceof Error ? err.message : String(err));
    }
  }
  // The one instant at which readers through the catalog see every version of the batch.
  await releaseBatch(tables.records, batch, members);
  log.warn(
    { batch, versions: members.map((m) => `${m.table.join(".")}@${m.version}`) },
    "a batch of versions whose instance stopped part-way was finished by a reader that met its hold",
  );
  await recordAsCallers(tables, batch, author, members);
  return true;
}

/** A finished batch's records in its caller's name; the batch is applied whatever happens here, only they would lack. */
async function recordAsCallers(tables: FinishingTables, batch: string, author: BatchAuthor | null, members: BatchMember[]) {
  if (author) await tables.recordFinished(author, members).catch((err: unknown) => log.error({ err, batch }, "recording a finished batch failed"));
}

async function finishWithChanges(tables: FinishingTables, batch: string, members: BatchMember[], author: BatchAuthor | null, changes: BatchChanges) {
  const outcome = await settleBatch(tables, batch, members, changes);
  if (outcome.state === "aborted") {
    log.warn({ batch, why: outcome.why }, "a batch whose instance stopped part-way could not be applied, and was taken back by a reader that met its hold");
    return true;
  }
  log.warn({ batch }, "a batch whose instance stopped part-way was finished by a reader that met its hold");
  await recordAsCallers(tables, batch, author, members);
  return true;
}

/**
 * Carries a batch that changes the catalog to its decision and past it, from wherever an attempt of it stopped (see
 * the top of this file); every attempt ends the same way, whichever decided.
 */
export async function settleBatch(
  tables: FinishingTables,
  hold: string,
  members: BatchMember[],
  changes: BatchChanges,
): Promise<{ state: "committed" } | { state: "aborted"; why: string }> {
  const catalog = tables.batchCatalog;
  let decided = await catalog.batchDecision(hold);
  let why: string | null = null;
  const named = [...members.map((m) => m.table), ...changes.declares.map((d) => d.id), ...changes.deregisters.map((d) => d.id)];
  if (!decided) {
    why = await prepare(tables, hold, members, changes);
    for (const id of named) {
      pausepoint("pause-before-batch-decision", formatIdentifier(id));
      failpoint("kill-before-batch-decision", formatIdentifier(id));
    }
    const outcome = await catalog.decideBatch(hold, why ? "aborted" : "committed", changes);
    if ("conflict" in outcome) {
      why = outcome.conflict;
      decided = ((await catalog.decideBatch(hold, "aborted", changes)) as { state: BatchState }).state;
    } else decided = outcome.state;
  }
  if (decided === "committed") {
    for (const id of named) failpoint("kill-after-batch-decision", formatIdentifier(id));
    await catalog.afterBatchDecided(changes);
    for (const deletion of changes.deletions) {
      const entry = await entryOrGone(tables, deletion.table);
      // A table dropped since the decision has no versions left to delete.
      if (!entry) continue;
      const files = tables.filesOf(entry);
      const kept = await tables.commitTo(entry, async () => {
        await files.deleteManifests(deletion.directory, deletion.versions, deletion.v2);
        return new Set((await files.versions(deletion.directory)).sources.keys());
      });
      // The records of who made the deleted versions go with them.
      await pruneAuthors(tables.records, entry, deletion.branch, kept);
    }
    // Readers through the catalog have seen the versions since the decision (heldBack asks it); the hold goes.
    await releaseBatch(tables.records, hold, members);
    return { state: "committed" };
  }
  // Aborted, by this attempt or another: whatever any attempt published or reserved goes, then the hold.
  const published: Planned[] = [];
  for (const member of members) {
    const planned = await planOf(tables, member);
    if (typeof planned !== "string" && planned.published) published.push(planned);
  }
  await takeBack(tables, published);
  for (const declare of changes.declares) await catalog.releaseBatchReservation(declare, hold);
  await releaseBatch(tables.records, hold, members);
  return { state: "aborted", why: why ?? "another attempt of the batch found that it could not be applied" };
}

/**
 * Reserves the batch's declared locations and publishes its versions, held; the reason it cannot, if any. A failure
 * of the store is thrown, not a reason: the batch stays undecided, and its retry carries it on.
 */
async function prepare(tables: FinishingTables, hold: string, members: BatchMember[], changes: BatchChanges): Promise<string | null> {
  for (const declare of changes.declares) {
    if (!(await tables.batchCatalog.reserveForBatch(declare, hold))) return `the location of table '${declare.objectId}' is already in use`;
  }
  for (const member of members) {
    const planned = await planOf(tables, member);
    if (typeof planned === "string") return `table '${formatIdentifier(member.table)}': ${planned}`;
    if (planned.published) continue;
    try {
      await publish(tables, planned);
    } catch (err) {
      // Another commit took the version. Anything else (the store failing) leaves the batch undecided, for a retry.
      if (err instanceof QuiverError && err.codeName === "ConcurrentModification") return err.message;
      throw err;
    }
  }
  return null;
}

/** A table's entry, or null once it is catalogued no more; a failure to look (the store's) is thrown. */
async function entryOrGone(tables: FinishingTables, id: Id): Promise<TableEntry | null> {
  return tables.resolve(id).catch((err: unknown) => {
    if (err instanceof QuiverError && err.codeName === "TableNotFound") return null;
    throw err;
  });
}

/** What finishing a member takes, or why it cannot be finished. */
async function planOf(tables: FinishingTables, member: BatchMember): Promise<Planned | string> {
  const entry = await entryOrGone(tables, member.table);
  const files = entry && tables.filesOf(entry);
  if (!entry || !files || files.directoryOf(member.branch) !== member.directory) return "its table is no longer there";
  const [content, there] = await Promise.all([files.read(member.staged), files.read(manifestKey(member.directory, member.version, member.v2))]);
  if (!content) return "its staged manifest is gone";
  if (!there) return { member, entry, files, content, published: false };
  if (there.equals(content)) return { member, entry, files, content, published: true };
  return `version ${member.version} is another commit's`;
}

/** Publishes a member's staged manifest as its version; true when this write made it (not an earlier one of the batch's). */
async function publish(tables: FinishingTables, { entry, files, member, content }: Planned): Promise<boolean> {
  return tables.commitTo(
    entry,
    async () => {
      const commit = await files.publishManifest(member.directory, member.version, member.v2, content);
      if (!commit) throw new QuiverError("ConcurrentModification", `version ${member.version} of table '${entry.objectId}' is another commit's`);
      return commit.made;
    },
    // Reading the staged manifest showed the table's directory there.
    { directorySeen: true },
  );
}

/** Takes back versions the batch published (by this finisher, or by any attempt of an aborted batch), each while nothing was committed on it. */
async function takeBack(tables: FinishingTables, mine: Planned[]) {
  for (const { entry, files, member } of mine.reverse()) {
    await tables
      .commitTo(entry, async () => {
        const keptBy = await files.takeBackVersion(member.directory, member.version, member.v2);
        if (keptBy !== null) throw new Error(`version ${keptBy} was committed on it`);
      })
      .catch((err: unknown) => log.error({ err, table: member.table, version: member.version }, "a version of an unfinished batch could not be taken back"));
  }
}

function gaveUp(batch: string, member: BatchMember, why: string): false {
  log.error({ batch, table: member.table, version: member.version, why }, "a batch of versions whose instance stopped part-way cannot be finished");
  return false;
}

/** The audit entry of a batch a reader finished: the batch's own, as its answer would have written it, saying so. */
export function finishedBatchEntry(author: BatchAuthor, members: BatchMember[]): AuditEntry {
  const versions = members.map((m) => `'${formatIdentifier(m.table)}' ${versionAt(m.version, m.branch)}`).join(", ");
  return {
    time: new Date().toISOString(),
    requestId: author.requestId,
    principal: author.principal,
    action: author.operation,
    method: "POST",
    path: author.path,
    database: author.database,
    target: null,
    status: 200,
    code: null,
    outcome: "ok",
    detail: `published ${versions} by a reader after the batch's instance stopped before answering`,
  };
}
