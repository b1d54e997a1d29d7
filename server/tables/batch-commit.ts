/**
 * Changes to several tables committed together: BatchCommitTables (declares, versions, version deletions and
 * deregisters) and BatchCreateTableVersions (versions only). All or nothing: every operation is checked before any is
 * applied. The new versions of a batch are held back from readers that ask the catalog for versions until every part
 * is applied (batch-holds.ts), so those readers see them all at once or none; a reader listing the store itself may
 * see the first tables changed before the last. A batch of versions alone publishes them in order and undoes them,
 * last first, when one fails; one whose instance stopped part-way is finished by its retry or a reader
 * (BatchOfVersions in write-ledger.ts). A batch with other changes is decided by one catalog commit, which any
 * attempt of it may make, and settled from there (settleBatch in batch-finish.ts).
 */
import "server-only";
import { formatIdentifier } from "@/lib/identifiers";
import { QuiverError, invalidInput } from "@/server/errors";
import { failpoint, pausepoint } from "@/server/failpoints";
import { log } from "@/server/log";
import type { Catalog, Id } from "@/server/catalog/catalog";
import type { Tables } from "./tables";
import { holdVersions, newBatchId, type BatchAuthor, type BatchChanges, type BatchMember } from "@/server/catalog/batch-holds";
import { currentWrite, type BatchOfVersions, type WriteTicket } from "./write-ledger";
import { plannedDeletion, publishedVersion, tableVersionStep, type NewTableVersion, type Step, type TableVersionRecord } from "./versions";
import { settleBatch } from "./batch-finish";

export type BatchOperation =
  | { kind: "declare_table"; id: Id; location?: string; properties: Record<string, string> }
  | { kind: "create_table_version"; id: Id; version: NewTableVersion }
  | { kind: "delete_table_versions"; id: Id; ranges: Array<{ start: number; end: number }>; branch?: string }
  | { kind: "deregister_table"; id: Id };

export type BatchResult =
  | { kind: "declare_table"; location: string; properties: Record<string, string> }
  | { kind: "create_table_version"; version: TableVersionRecord }
  | { kind: "delete_table_versions"; deleted_count: number }
  | { kind: "deregister_table"; location: string; properties: Record<string, string> };

const nameOf = (op: BatchOperation) => `operation ${op.kind} of table '${formatIdentifier(op.id)}'`;

/** The same failure, saying which operation of the batch it was and what became of the others. */
function inBatch(index: number, op: BatchOperation, err: unknown, after = ""): unknown {
  if (!(err instanceof QuiverError)) return err;
  return new QuiverError(err.codeName, `${nameOf(op)} (number ${index + 1}): ${err.message}${after}`, { status: err.status });
}

async function versionStep(tables: Tables, op: Extract<BatchOperation, { kind: "create_table_version" }>): Promise<Step<BatchResult>> {
  const step = await tableVersionStep(tables, op.id, op.version);
  return { ...step, apply: async () => ({ kind: op.kind, ...(await step.apply()) }) };
}

/** A batch with changes besides versions, as checked: the versions it publishes and its other changes. */
interface CheckedChanges {
  members: BatchMember[];
  changes: BatchChanges;
}

async function checkChanges(catalog: Catalog, tables: Tables, operations: BatchOperation[]): Promise<CheckedChanges> {
  const members: BatchMember[] = [];
  const changes: BatchChanges = { declares: [], deregisters: [], deletions: [] };
  for (const [i, op] of operations.entries()) {
    const check = async () => {
      switch (op.kind) {
        case "create_table_version":
          members.push((await tableVersionStep(tables, op.id, op.version)).publishes!);
          break;
        case "declare_table":
          changes.declares.push(await catalog.batchDeclare(op.id, op.location, op.properties));
          break;
        case "deregister_table":
          changes.deregisters.push(await catalog.batchDeregister(op.id));
          break;
        case "delete_table_versions":
          changes.deletions.push(await plannedDeletion(tables, op.id, op.ranges, op.branch));
          break;
      }
    };
    await check().catch((err) => Promise.reject(inBatch(i, op, err, "; nothing was changed")));
  }
  return { members, changes };
}

/**
 * A committed batch's results. `tidy` removes the staged manifests the batch published once its answer is recorded
 * (`recorded`): until then they are what tells a retry of a batch whose instance stopped which versions it published.
 */
export interface CommittedBatch {
  results: BatchResult[];
  tidy: (recorded: Promise<unknown>) => Promise<void>;
}

export async function commitBatch(catalog: Catalog, tables: Tables, operations: BatchOperation[]): Promise<CommittedBatch> {
  return (await checkBatch(catalog, tables, operations)).apply();
}

/** Checks every operation of a batch, changing nothing; what it answers applies them all, or none. */
export async function checkBatch(catalog: Catalog, tables: Tables, operations: BatchOperation[]): Promise<{ apply(): Promise<CommittedBatch> }> {
  if (operations.length === 0) throw invalidInput("a batch needs at least one operation");
  const first = new Map<string, number>();
  operations.forEach((op, i) => {
    const table = formatIdentifier(op.id);
    const earlier = first.get(table);
    if (earlier !== undefined) {
      throw invalidInput(`operations ${earlier + 1} and ${i + 1} both change table '${table}': a batch changes each table once`);
    }
    first.set(table, i);
  });
  const resumes = currentWrite.getStore()?.resumes ?? null;
  if (operations.some((op) => op.kind !== "create_table_version")) {
    // A retry of one an earlier attempt claimed carries on from what that attempt checked: its checks, run again,
    // would find what it did.
    const checked = resumes?.changes ? { members: resumes.members, changes: resumes.changes } : await checkChanges(catalog, tables, operations);
    return { apply: () => applyChanges(catalog, tables, operations, checked, resumes) };
  }
  const steps: Array<Step<BatchResult>> = [];
  for (const [i, op] of operations.entries()) {
    if (op.kind !== "create_table_version") continue;
    steps.push(await versionStep(tables, op).catch((err) => Promise.reject(inBatch(i, op, err, "; nothing was changed"))));
  }
  return { apply: () => applyAll(tables, operations, steps) };
}

/** Where each operation's part is in its list: the members (versions), or the changes of its kind, each in order. */
function partsOf(operations: BatchOperation[]): number[] {
  const seen = new Map<string, number>();
  return operations.map((op) => {
    const kind = op.kind === "create_table_version" ? "member" : op.kind;
    const next = seen.get(kind) ?? 0;
    seen.set(kind, next + 1);
    return next;
  });
}

/**
 * Applies a batch with changes besides versions: claims it with everything it will do, holds its versions, and
 * settles it (batch-finish.ts), which decides it in the catalog; answers each operation's result, or, where the batch
 * could not be applied, says why, nothing of it left.
 */
async function applyChanges(
  catalog: Catalog,
  tables: Tables,
  operations: BatchOperation[],
  { members, changes }: CheckedChanges,
  resumes: BatchOfVersions | null,
): Promise<CommittedBatch> {
  const ticket = currentWrite.getStore();
  const hold = resumes?.hold ?? newBatchId();
  await tables.claimBatch({ hold, members, changes });
  // A retry finds the hold of the attempt it carries on from, or, once that batch is decided, needs none.
  if (!resumes || !(await catalog.batchDecision(hold))) {
    await holdVersions(tables.records, members, { members, author: authorOf(ticket), changes, batch: hold });
  }
  const outcome = await settleBatch(tables, hold, members, changes);
  if (outcome.state === "aborted") throw new QuiverError("ConcurrentModification", `the batch was not applied: ${outcome.why}; nothing was changed`);
  failpoint("kill-after-batch", formatIdentifier(operations[0].id));
  const parts = partsOf(operations);
  const results: BatchResult[] = [];
  for (const [i, op] of operations.entries()) {
    const part = parts[i];
    switch (op.kind) {
      case "create_table_version":
        results.push({ kind: op.kind, version: await publishedVersion(tables, members[part]) });
        break;
      case "declare_table": {
        const { location, properties } = changes.declares[part];
        results.push({ kind: op.kind, location: catalog.uriOf(location), properties });
        break;
      }
      case "deregister_table": {
        const { location, properties } = changes.deregisters[part];
        results.push({ kind: op.kind, location: catalog.uriOf(location), properties });
        break;
      }
      case "delete_table_versions":
        results.push({ kind: op.kind, deleted_count: changes.deletions[part].versions.length });
        break;
    }
  }
  const tidy = async (recorded: Promise<unknown>) => {
    // Unrecorded, the answer may be asked for again: the staged manifests stay to tell the retry what was published.
    if (!(await recorded.then(() => true).catch(() => false))) return;
    for (const member of members) {
      await tables
        .resolve(member.table)
        .then((entry) => tables.filesOf(entry).remove(member.staged))
        .catch((err: unknown) => log.warn({ err, table: member.table }, "removing a committed version's staged manifest failed"));
    }
  };
  return { results, tidy };
}

/**
 * Ends a batch's hold. The versions are committed (or undone) whatever happens here: a record that cannot be
 * deleted holds them back from readers through the catalog until it is taken for abandoned, which is logged.
 */
async function letGo(hold: Awaited<ReturnType<typeof holdVersions>> | null) {
  if (!hold) return;
  try {
    await hold.release();
    await hold.tidy();
  } catch (err) {
    log.error({ err }, "ending a batch's hold on its versions failed");
  }
}

/**
 * A batch that only publishes versions, as its claim names it: under the hold of the attempt it finishes, if any
 * (WriteTicket.resumes), else under a new one.
 */
function versionsOnly(steps: Array<Step<BatchResult>>, resumes: BatchOfVersions | null): BatchOfVersions {
  return { hold: resumes?.hold ?? newBatchId(), members: steps.map((step) => step.publishes!) };
}

/** The batch's caller and commit, for the records a reader writes should it finish the batch (batch-finish.ts). */
function authorOf(ticket: WriteTicket | undefined): BatchAuthor | null {
  const commit = ticket?.claimed?.record.shape.commit;
  if (!ticket || !commit) return null;
  const { requestId, principal, operation, database, path } = ticket.request;
  return { requestId, principal, operation, commit, database, path };
}

async function applyAll(tables: Tables, operations: BatchOperation[], steps: Array<Step<BatchResult>>): Promise<CommittedBatch> {
  const ticket = currentWrite.getStore();
  const resumes = ticket?.resumes ?? null;
  const versions = versionsOnly(steps, resumes);
  await tables.claimBatch(versions);
  const publishing = steps.flatMap((step) =>
    step.publishes && !step.published ? [{ directory: step.publishes.directory, version: step.publishes.version }] : [],
  );
  // Finishing an interrupted batch: what it published stays held with what is published now, until all are there.
  const finishing = resumes !== null;
  // The hold names every version, so that a reader can finish the batch should this instance stop.
  const hold =
    publishing.length > 1 || finishing
      ? await holdVersions(tables.records, publishing, {
          members: versions.members,
          author: authorOf(ticket),
          batch: versions.hold,
          earlier: finishing ? versions.members : [],
        })
      : null;
  const results: BatchResult[] = [];
  for (const [i, step] of steps.entries()) {
    pausepoint("pause-in-batch", formatIdentifier(operations[i].id));
    try {
      results.push(await step.apply());
    } catch (err) {
      const kept: string[] = [];
      for (let j = i - 1; j >= 0; j--) {
        await steps[j].undo().catch((undoErr: unknown) => {
          log.error({ err: undoErr, operation: nameOf(operations[j]) }, "an applied operation of a failed batch could not be undone");
          kept.push(`${nameOf(operations[j])} stays applied: ${undoErr instanceof Error ? undoErr.message : String(undoErr)}`);
        });
      }
      await letGo(hold);
      const undone = kept.length === 0 ? "; the operations before it were undone" : kept.length < i ? "; the other operations before it were undone" : "";
      const after = i === 0 ? "; nothing was changed" : `${kept.map((k) => `; ${k}`).join("")}${undone}`;
      throw inBatch(i, operations[i], err, after);
    }
  }
  // The one instant at which readers through the catalog see every version the batch published.
  await letGo(hold);
  failpoint("kill-after-batch", formatIdentifier(operations[0].id));
  const tidy = async (recorded: Promise<unknown>) => {
    // Unrecorded, the answer may be asked for again: the staged manifests stay to tell the retry what was published.
    const stored = await recorded.then(() => true).catch(() => false);
    if (!stored) return;
    for (const [i, step] of steps.entries()) {
      // A staged manifest left behind costs its bytes, not a wrong answer: the batch has committed.
      await step.finish().catch((err: unknown) => log.warn({ err, operation: nameOf(operations[i]) }, "tidying after a batch commit failed"));
    }
  };
  return { results, tidy };
}
