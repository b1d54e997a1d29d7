/**
 * One table's data, for the operations on it: its write turn (one write to a table's directory at a time within
 * this process, with the check that the table was not dropped under it), the handles to read and commit through,
 * group commit of appends, its own Lance files, and the description of a version. Tables are found by name through
 * the catalog; nothing here changes which tables exist.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { LRUCache } from "lru-cache";
import { tableFromIPC, type Schema } from "apache-arrow";
import { schemaToJson, type JsonSchema } from "@/lib/arrow-schema";
import { wantsStableRowIds } from "@/lib/contract/catalog";
import { config } from "@/server/config";
import { QuiverError, invalidInput } from "@/server/errors";
import type { Catalog, Id, ReadAt } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import type { TableTurns } from "@/server/catalog/table-turns";
import { heldBack, type BatchAuthor, type BatchMember } from "@/server/catalog/batch-holds";
import { batchFinisher, type BatchCatalog } from "./batch-finish";
import type { ArrowBody } from "@/server/lance/arrow-ipc";
import type { Datasets } from "@/server/lance/datasets";
import { engineCall, type NativeTable } from "@/server/lance/native";
import { TableFiles, type ManifestSource } from "@/server/lance/table-files";
import { failpoint, holdpoint, pausepoint } from "@/server/failpoints";
import { COMMITTED_BY_PROPERTY, REQUESTS_PROPERTY, type BatchHold, type LatestManifest } from "@/server/lance/version-manifest";
import { countLookup } from "@/server/metrics";
import type { ObjectStore } from "@/server/storage/object-store";
import { AppendGroups, type Appending } from "./append-groups";
import { WrittenTables } from "./written-tables";
import { EarlierAttempt, currentWrite, type BatchOfVersions, type CommitShape, type WriteLedger, type WriteTicket } from "./write-ledger";
import { namedBranch } from "./branch-name";

interface TableVersionDescription {
  version: number;
  schema: JsonSchema;
  stats: Awaited<ReturnType<NativeTable["stats"]>>;
  /** From the version's manifest, where it could be read (the main branch). */
  deletedRows?: number;
  tableMetadata?: Record<string, string>;
}

type TableDescription = { entry: TableEntry; declaredOnly: boolean } & Partial<TableVersionDescription>;

/** Where a table stands after a write to it: still in the catalog, or dropped (its files gone) or deregistered under it. */
export type WriteOutcome = "catalogued" | "dropped" | "deregistered";

const gone = (entry: TableEntry) => new QuiverError("TableNotFound", `Table '${entry.objectId}' was dropped or moved`);

/** Whether a read is of the main branch's newest version, which a listing of its versions decides. */
const readsLatestOfMain = (at: ReadAt) => at.version === undefined && at.tag === undefined && (!at.branch || at.branch === "main");

export class Tables {
  /** Appends waiting for a table's write turn, committed together. */
  private readonly appends = new AppendGroups();
  /** The tables this process committed to lately, for the maintainer's next pass. */
  private readonly written: WrittenTables;
  /** Descriptions of tables' latest versions, by manifest key and etag: a new version or a replaced file misses. */
  private readonly descriptions = new LRUCache<string, TableVersionDescription>({ max: 10_000 });
  /** Each handle's schema as last read, parsed: a schema that is still the same is not parsed again for every write. */
  private readonly schemas = new WeakMap<NativeTable, { ipc: Buffer; schema: Schema }>();

  /**
   * `turns` is the catalog's too: drops, moves and deregisters of a table wait for its turn, so that a write that
   * waited behind one finds the table gone instead of writing files into a directory no longer its own. `records` is
   * the root's store, where the records kept beside the tables live (batch holds, who made each version, jobs).
   */
  constructor(
    private readonly catalog: Catalog,
    private readonly datasets: Datasets,
    readonly records: ObjectStore,
    private readonly turns: TableTurns,
    /** Each write request applied at most once: its claim is made beside the commit's own look at the store. */
    readonly ledger: WriteLedger,
    /** Writes the records of a batch a reader finished in its caller's name (its versions' authors, its audit entry). */
    private readonly recordsOfFinished: (author: BatchAuthor, members: BatchMember[]) => Promise<unknown>,
  ) {
    this.written = new WrittenTables(records);
  }

  // ---------------------------------------------------------------- finding a table

  resolve(id: Id): Promise<TableEntry> {
    return this.catalog.resolve(id);
  }

  /** See Catalog.resolveWith: `early` runs on the table the last look at the catalog named while a fresh look runs. */
  resolveWith<T>(id: Id, early: (entry: TableEntry) => Promise<T>) {
    return this.catalog.resolveWith(id, early);
  }

  knownEntry(id: Id): Promise<TableEntry> {
    return this.catalog.knownEntry(id);
  }

  isDeclaredOnly(entry: TableEntry): Promise<boolean> {
    return this.catalog.isDeclaredOnly(entry);
  }

  /**
   * Opening a table for an operation that needs its data: the table must exist and have been written (a declared
   * table has nothing to read or change yet, and the refusal names the operation). Whether it was written is asked
   * of the store only when the engine could not open it (onWritten), which spares every operation on a written
   * table one read. This one answers the latest version of the table (or of a branch), to change it.
   */
  async dataHandle(id: Id, what: string, branch?: string) {
    const entry = await this.resolve(id);
    return { entry, table: await this.onWritten(entry, what, () => this.writeHandle(entry, branch)) };
  }

  /** The table at a version, tag or branch, to read it (see dataHandle). */
  async dataAt(id: Id, what: string, at: ReadAt) {
    const entry = await this.resolve(id);
    return { entry, table: await this.onWritten(entry, what, () => this.readHandle(entry, at)) };
  }

  /**
   * Reads the table at a version, tag or branch with `read`, which runs while the catalog is checked (see
   * `Catalog.resolveWith`): a read that changes nothing pays for one round trip to the store where it would pay two.
   */
  async readAt<T>(id: Id, what: string, at: ReadAt, read: (table: NativeTable, entry: TableEntry) => Promise<T>): Promise<T> {
    const { value } = await this.resolveWith(id, async (entry) => read(await this.onWritten(entry, what, () => this.readHandle(entry, at)), entry));
    return value;
  }

  // ---------------------------------------------------------------- writing

  /** Writes the first version of a declared-only table; null when it already had data (a concurrent writer won). */
  async writeFirstVersion(entry: TableEntry, body: ArrowBody): Promise<number | null> {
    const beingCreated = () => new QuiverError("ConcurrentModification", `Table '${entry.objectId}' is being created by another request; retry`);
    if (!(await this.catalog.awaitsFirstWrite(entry, beingCreated))) return null;
    // Under its requests' guard: another attempt of them may have made the first version meanwhile.
    const created = this.commitTo(
      entry,
      async () => {
        if (!(await this.catalog.awaitsFirstWrite(entry, beingCreated))) return null;
        const table = await this.datasets.create(entry.location, body, "create", { stableRowIds: wantsStableRowIds(entry.properties, config.stableRowIds) });
        return table.version();
      },
      { guarded: true },
    );
    return created.catch((err: unknown) => {
      if (err instanceof QuiverError && err.codeName === "TableAlreadyExists") return null;
      throw err;
    });
  }

  /**
   * Appends `body` to a branch of the table with the appends that arrive while a write to it runs: the group shares
   * one turn and one commit, which claims each member's request in the ledger beside its look at the directory and
   * checks on its own whether the table is still there (unlessDropped).
   */
  append(entry: TableEntry, branch: string, body: ArrowBody, commit: (file: Buffer, stamp: string) => Promise<number>): Promise<number> {
    return this.appends.append(
      `${entry.location}@${branch}`,
      { body, ticket: currentWrite.getStore() },
      (run) => this.turnOf(entry, run),
      (members, file) =>
        this.unlessDropped(entry, async (stamp) => (members.some((m) => m.refused === undefined) ? commit(file(), stamp) : 0), {
          claim: () => this.claimGroup(entry, branch, members),
          guarded: true,
          looked: members.map((m) => m.ticket),
        }),
    );
  }

  /**
   * Claims the requests of a group of appends for one commit; a member whose request is already in the ledger is
   * refused (its `refused` set) and left out of the commit.
   */
  private async claimGroup(entry: TableEntry, branch: string, members: Appending[]): Promise<WriteTicket[]> {
    const tickets = members.filter((m) => m.ticket);
    if (tickets.length === 0) return [];
    const seen = tickets.map((m) => m.ticket!.seen);
    const base = await this.shapeBase(entry, branch, seen.includes(null) ? null : Math.min(...(seen as number[])));
    const commit = randomUUID();
    const claims = await Promise.allSettled(
      tickets.map(async (m) => {
        const ticket = m.ticket!;
        // A member of a group whose joined commit the engine refused commits again alone, under a claim of its own.
        if (ticket.claimed) await this.ledger.release(ticket);
        await this.ledger.claim(ticket, { ...base, commit, named: true });
      }),
    );
    claims.forEach((claim, i) => {
      if (claim.status === "rejected" && claim.reason instanceof EarlierAttempt) tickets[i].refused = claim.reason;
    });
    // A claim the store did not take leaves the group uncommitted: the others' claims name a commit that never comes.
    const failed = claims.find((c): c is PromiseRejectedResult => c.status === "rejected" && !(c.reason instanceof EarlierAttempt));
    if (failed) throw failed.reason;
    return tickets.filter((m) => m.refused === undefined).map((m) => m.ticket!);
  }

  /**
   * Where a commit to a branch goes and the version it builds on, as a claim states it: the latest version the write
   * saw of main before it (`seen`), or else the one a listing finds now.
   */
  private async shapeBase(entry: TableEntry, branch: string | null | undefined, seen: number | null, after?: number) {
    const files = this.filesOf(entry);
    const named = namedBranch(branch);
    const directory = files.directoryOf(named ?? undefined);
    const latest = after ?? (named === null && seen !== null ? seen : ((await files.latestManifest(directory))?.version ?? 0));
    return { location: entry.location, directory, branch: named, after: latest };
  }

  /** Claims the current request's write (where the ledger covers it) for the commit about to run. */
  private async claimCurrent(entry: TableEntry, extra: Partial<CommitShape> = {}): Promise<WriteTicket[]> {
    const ticket = currentWrite.getStore();
    if (!ticket || ticket.claimed) return [];
    await this.ledger.claim(ticket, await this.shapeOf(entry, ticket, extra));
    return [ticket];
  }

  private async shapeOf(entry: TableEntry, ticket: WriteTicket, extra: Partial<CommitShape>): Promise<CommitShape> {
    return {
      ...(await this.shapeBase(entry, ticket.request.branch, ticket.seen, extra.after)),
      commit: randomUUID(),
      ...extra,
    };
  }

  /**
   * Claims the current request's write ahead of its commit, for a commit whose shape the request itself says (the
   * version it makes, so the version before it): the claim is then written beside the reads that check the write,
   * not after them. Give what it answers to `commitBeforeDrops` as its claim.
   */
  async claimAhead(entry: TableEntry, shape: Partial<CommitShape> & { after: number }): Promise<WriteTicket[]> {
    const ticket = currentWrite.getStore();
    const claimedAt = ticket?.claimed?.record.shape.location;
    // Looked up again (the table had moved since this process last looked): the claim already made must be of it.
    if (claimedAt !== undefined) {
      if (claimedAt !== entry.location) throw new QuiverError("ConcurrentModification", `table '${entry.objectId}' moved while this write began; retry`);
      return [ticket!];
    }
    return this.claimCurrent(entry, shape);
  }

  /** The newest version in the table's `_versions/` listing, with a batch's holds; null for a table without one. */
  latestManifest(entry: TableEntry): Promise<LatestManifest | null> {
    return this.datasets.latestManifest(entry.location);
  }

  /**
   * The handle to commit through from within `commitTo`, for the directory whose stamp the turn gave, holding at least
   * `seen` (the latest version the write's look found): caught up here, in the turn, where no other commit of this
   * process runs on it.
   */
  async turnHandle(entry: TableEntry, stamp: string, seen = 0): Promise<NativeTable> {
    const table = await this.datasets.commitHandle(entry.location, stamp);
    if ((await engineCall("read the version", () => table.version())) < seen) await engineCall("open table", () => table.checkoutLatest());
    return table;
  }

  /** A handle of its own at the latest version, which no other request moves (for a long rewrite). */
  openDetached(entry: TableEntry): Promise<NativeTable> {
    return this.datasets.openDetached(entry.location);
  }

  /** Drops the handles open on the table, after a change the engine's handles did not make themselves. */
  forget(entry: TableEntry): void {
    this.datasets.forget(entry.location);
  }

  /** Runs work that needs the table's data; when it fails on a table with no version yet, the refusal says so and names `what`. */
  async onWritten<T>(entry: TableEntry, what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      await this.requireData(entry, what);
      throw err;
    }
  }

  /**
   * Runs one write to a table's directory at a time within this process, on any branch. Lance resolves concurrent
   * commits by rebasing and retrying, which under many writers to one table wastes work and can time out; queueing
   * them here does not. Drops and moves queue here too, so a write that waited behind one finds the table gone
   * instead of writing files into a directory that no longer belongs to it.
   */
  commitTo<T>(entry: TableEntry, commit: (stamp: string) => Promise<T>, options: { directorySeen?: boolean; guarded?: boolean } = {}): Promise<T> {
    const { directorySeen, guarded = false } = options;
    return this.turnOf(entry, () =>
      this.unlessDropped(entry, commit, { directorySeen, guarded, claim: () => this.claimCurrent(entry, guarded ? { named: true } : {}) }),
    );
  }

  /** Runs `work` in the table's write turn: this process's, and that of the other workers of its machine. */
  turnOf<T>(entry: TableEntry, work: () => Promise<T>): Promise<T> {
    return this.turns.run(entry.location, work);
  }

  /**
   * Runs one write in the table's turn, answering TableNotFound when the table was dropped before or under it. A
   * drop in another instance can land while the write is under way; the engine then writes its files where the
   * table was, making its directory again. So after the write the catalog is asked whether the table is still
   * there, and if it is not, what the write left goes too, and the write is answered as not found. `write` gets the
   * stamp of the table's directory as it is now (Datasets.directoryStamp), or "" with `directorySeen`: a caller that
   * has just read a file inside the directory and writes without the engine (a manifest written whole) needs neither
   * the stamp nor the look at the directory it costs. A `guarded` write commits through the commit handle, under the
   * guard of the requests it claimed (guardCommit).
   */
  async unlessDropped<T>(
    entry: TableEntry,
    write: (stamp: string) => Promise<T>,
    {
      directorySeen = false,
      guarded = false,
      claim = () => this.claimCurrent(entry),
      looked = [currentWrite.getStore()],
    }: { directorySeen?: boolean; guarded?: boolean; claim?: () => Promise<WriteTicket[]>; looked?: Array<WriteTicket | undefined> } = {},
  ): Promise<T> {
    // The requests' claims in the ledger are written beside the look at the directory, a round trip the write makes
    // anyway; none is needed where a look the write made found this process's own last commit still the latest.
    const [stamp, claimed] = await Promise.all([directorySeen ? "" : this.stampOf(entry, looked), claim()]);
    if (stamp === null) throw gone(entry);
    claimed.forEach((ticket) => (ticket.commitStarted = true));
    if (claimed.length) {
      failpoint("kill-after-claim", entry.objectId);
      pausepoint("pause-after-claim", entry.objectId);
      await holdpoint("hold-after-claim", entry.objectId);
    }
    const result = await this.writeOrGone(entry, () => (guarded ? this.guardCommit(entry, claimed, () => write(stamp)) : write(stamp)));
    failpoint("kill-after-commit", entry.objectId);
    claimed.forEach((ticket) => (ticket.landed = true));
    this.written.note(entry.location);
    if ((await this.afterWrite(entry)) !== "catalogued") throw gone(entry);
    return result;
  }

  /** The stamp of the table's directory for a commit (Datasets.stampFollowed, else one look at the store). */
  private async stampOf(entry: TableEntry, looked: Array<WriteTicket | undefined>): Promise<string | null> {
    const seen = looked.flatMap((t) => (t && t.seen !== null && t.seenEtag !== null && !t.request.branch ? [{ version: t.seen, etag: t.seenEtag }] : []));
    return (seen.length ? await this.datasets.stampFollowed(entry.location, seen) : null) ?? this.datasets.directoryStamp(entry.location);
  }

  /**
   * Runs one write of a manifest written whole in the table's turn, as commitTo, for a write answered as made even
   * when the table is dropped under it: the catalog held the table when the write began, so the write is ordered
   * before the drop, and what it left where the table was goes as the drop's other files went. The look at the
   * catalog after the write then need not come before the answer: `settle` makes it (and removes what the write
   * left, if the table was dropped) beside the caller's last round trip, and says what it found.
   */
  async commitBeforeDrops<T>(
    entry: TableEntry,
    write: () => Promise<T>,
    shape: Partial<CommitShape>,
    claim: () => Promise<WriteTicket[]> = () => this.claimCurrent(entry, shape),
  ): Promise<{ result: T; settle: () => Promise<WriteOutcome> }> {
    const claimed: WriteTicket[] = [];
    const result = await this.turnOf(entry, async () => {
      claimed.push(...(await claim()));
      claimed.forEach((ticket) => (ticket.commitStarted = true));
      if (claimed.length) failpoint("kill-after-claim", entry.objectId);
      return this.writeOrGone(entry, write);
    });
    failpoint("kill-after-commit", entry.objectId);
    claimed.forEach((ticket) => (ticket.landed = true));
    this.written.note(entry.location);
    return { result, settle: () => this.afterWrite(entry) };
  }

  /**
   * Claims the current request's write as a whole before a batch applies it: the claim names its versions, their
   * hold and its other changes, so that a retry finishes it (BatchOfVersions).
   */
  claimBatch(batch: BatchOfVersions): Promise<void> {
    const ticket = currentWrite.getStore();
    if (!ticket || ticket.claimed) return Promise.resolve();
    const shape: CommitShape = { location: "", directory: "", branch: null, after: 0, commit: randomUUID(), batch };
    return this.ledger.claim(ticket, shape).then(() => {
      ticket.commitStarted = true;
    });
  }

  /**
   * Runs a commit through the commit handle with the claimed requests' guard: the version it makes names them, and
   * it is made only where no version since a request's first claim already names that request (another attempt of
   * it made it, on any instance, say while this one was paused). The versions below the one a commit makes all
   * exist and never change, so of two attempts the later to commit always finds the earlier's version: a request
   * lands once, whoever retries and whatever stalls. A lone request found applied commits nothing and settles as
   * its earlier attempt (EarlierAttempt).
   */
  private async guardCommit<T>(entry: TableEntry, tickets: WriteTicket[], work: () => Promise<T>): Promise<T> {
    if (tickets.length === 0) return work();
    // A group's version is committed by its first member's caller, as its record named them (others' are in the audit log).
    const { principal, operation } = tickets[0].request;
    const guard = {
      properties: {
        [REQUESTS_PROPERTY]: tickets.map((t) => t.request.key).join(" "),
        [COMMITTED_BY_PROPERTY]: JSON.stringify({ principal, operation }),
      },
      admit: async (files: TableFiles, directory: string, version: number) => {
        pausepoint("pause-before-publish", entry.objectId);
        tickets.forEach((ticket) => (ticket.admittedAt = version));
        let listed: Map<number, ManifestSource> | undefined;
        for (const ticket of tickets) {
          const since = ticket.claimed?.record.since ?? ticket.claimed?.record.shape.after ?? 0;
          if (version - 1 <= since) continue;
          listed ??= (await files.versions(directory)).sources;
          const applied = await files.versionNaming(directory, ticket.request.key, since, version, listed);
          if (applied !== null) {
            ticket.appliedAt = applied;
            throw new Error(`request ${ticket.request.requestId} was applied by another attempt, at version ${applied}`);
          }
        }
      },
    };
    try {
      return await this.datasets.guarded(entry.location, guard, work);
    } catch (err) {
      const [ticket, ...others] = tickets;
      if (others.length || ticket.appliedAt === null) throw err;
      await this.ledger.release(ticket);
      throw new EarlierAttempt([{ key: ticket.request.key }], false);
    }
  }

  /** Runs a write; when it fails because the table was dropped or moved under it, the failure says so. */
  private async writeOrGone<T>(entry: TableEntry, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if ((await this.afterWrite(entry)) !== "catalogued") throw gone(entry);
      throw err;
    }
  }

  /**
   * Whether the table is still in the catalog after a write; if it was dropped meanwhile, what the write left where
   * it was goes (a deregistered table's files are kept: what the write added stays with them, unreferenced).
   */
  private async afterWrite(entry: TableEntry): Promise<WriteOutcome> {
    if (await this.stillCatalogued(entry)) return "catalogued";
    if (await this.datasets.isDeregistered(entry.location)) return "deregistered";
    await this.catalog.removeDirectory(entry.location);
    return "dropped";
  }

  /** Whether the catalog still holds this table at this location (a root-level dataset without a row: its directory). */
  private async stillCatalogued(entry: TableEntry): Promise<boolean> {
    if (!entry.registered) return this.datasets.directoryExists(entry.location);
    // Under its name or, renamed meanwhile, another: its files are a table's still. A root-level directory the write
    // itself made again may be listed meanwhile without a row: that is not it.
    const index = await this.catalog.index();
    const holder = index.atLocation.get(entry.location);
    return holder !== undefined && index.tables.get(holder)?.registered === true;
  }

  /** The handle to write through: the shared latest handle, or the named branch. */
  async writeHandle(entry: TableEntry, branch?: string): Promise<NativeTable> {
    const table = await this.datasets.open(entry.location);
    const named = namedBranch(branch);
    return named === null ? table : this.branchHandle(table, named);
  }

  /** The handle to commit to the main branch through (Datasets.commitHandle), at whatever version it holds. */
  commitHandle(entry: TableEntry): Promise<NativeTable> {
    return this.datasets.commitHandle(entry.location);
  }

  /**
   * The commit handle holding at least `version`, the latest a look at the store just found: moved to the latest only
   * when it is behind, in the table's write turn so that no commit of this process runs on it meanwhile.
   */
  async caughtUpHandle(entry: TableEntry, version: number): Promise<NativeTable> {
    const table = await this.commitHandle(entry);
    if ((await table.version()) >= version) return table;
    return this.turnOf(entry, async () => {
      if ((await table.version()) < version) await engineCall("open table", () => table.checkoutLatest());
      return table;
    });
  }

  /**
   * A manifest this service writes itself (not the engine), from within a guarded commit: let through by the
   * requests' guard and naming them, as the engine's commits through the commit handle are.
   */
  guardedManifest(files: TableFiles, directory: string, version: number, content: Buffer): Promise<Buffer> {
    return this.datasets.guardedManifest(files, directory, version, content);
  }

  /**
   * Commits `commit` in the table's turn through the commit handle, under its requests' guard (guardCommit): on main
   * the handle caught up to `seen` (the version the write's checks read), on a branch the branch checked out of it.
   */
  guardedCommit<T>(entry: TableEntry, branch: string | undefined, seen: number, commit: (table: NativeTable) => Promise<T>): Promise<T> {
    const named = namedBranch(branch);
    return this.commitTo(
      entry,
      async (stamp) => commit(named !== null ? await this.branchAppendHandle(entry, named) : await this.turnHandle(entry, stamp, seen)),
      { guarded: true },
    );
  }

  /** A branch's handle to append through, from within `commitTo`, so that the version the engine reports is the append's own. */
  async branchAppendHandle(entry: TableEntry, branch: string): Promise<NativeTable> {
    const table = await this.datasets.commitHandle(entry.location);
    await engineCall("open table", () => table.checkoutLatest());
    return this.branchHandle(table, branch);
  }

  private async branchHandle(table: NativeTable, branch: string): Promise<NativeTable> {
    const branches = await engineCall("list branches", () => table.branches());
    const known = await engineCall("list branches", () => branches.list());
    if (!(branch in known)) throw new QuiverError("TableBranchNotFound", `branch '${branch}' does not exist`);
    return engineCall("open branch", () => branches.checkout(branch));
  }

  /** A handle at the requested version, tag or branch (latest main when none is given). */
  async readHandle(entry: TableEntry, at: ReadAt = {}): Promise<NativeTable> {
    if (at.tag !== undefined && (at.version !== undefined || at.branch !== undefined)) throw invalidInput("give a tag, or a version and branch, not both");
    if (at.version === undefined && at.tag === undefined) return this.writeHandle(entry, at.branch);
    if (at.tag !== undefined) {
      const tag = at.tag;
      const tags = await engineCall("read tags", async () => (await this.datasets.open(entry.location)).tags());
      if (!(tag in (await engineCall("list tags", () => tags.list()))))
        throw new QuiverError("TableTagNotFound", `tag '${tag}' does not exist on table '${entry.objectId}'`);
      // Checking out by the tag's name, not its version number, finds the version on the branch the tag is on.
      const table = await this.datasets.openDetached(entry.location);
      await engineCall(`check out tag '${tag}'`, () => table.checkoutTag(tag));
      return table;
    }
    const table = namedBranch(at.branch) !== null ? await this.writeHandle(entry, at.branch) : await this.datasets.openDetached(entry.location);
    const version = at.version!;
    await table.checkout(version).catch(() => {
      throw new QuiverError("TableVersionNotFound", `version ${version} of table '${entry.objectId}' does not exist`);
    });
    return table;
  }

  /**
   * A handle on one version for the whole of a read that asks it several things (its schema, its version, its rows):
   * the one `at` names, or else the latest a reader may see, found by one listing of the table's versions and read
   * through a handle fixed at it, which asks the store nothing more where the shared latest handle lists the versions
   * again at each call.
   */
  async fixedHandle(entry: TableEntry, what: string, at: ReadAt): Promise<NativeTable> {
    const latest = readsLatestOfMain(at) ? await this.datasets.latestManifest(entry.location) : null;
    if (!latest) return this.onWritten(entry, what, () => this.readHandle(entry, at));
    const visible = await this.visibleVersion(latest);
    if (visible !== latest.version && visible > 0) return this.readHandle(entry, { version: visible });
    return this.datasets.atManifest(entry.location, latest);
  }

  /**
   * The versions among `holds` that a batch still committing them with other tables' holds back from readers; one
   * whose instance stopped part-way is finished meanwhile (batch-finish.ts).
   */
  heldBack(holds: readonly BatchHold[]): Promise<Set<number>> {
    return heldBack(this.records, holds, this.finishBatch, async (batch) => (await this.catalog.batchDecision(batch)) === "committed");
  }

  private readonly finishBatch = batchFinisher(this);

  /** What a batch that changes the catalog asks of it, to be settled (batch-finish.ts). */
  get batchCatalog(): BatchCatalog {
    return this.catalog;
  }

  async recordFinished(author: BatchAuthor, members: BatchMember[]): Promise<void> {
    await this.recordsOfFinished(author, members);
  }

  /** The newest version a reader may see: a batch still committing the newest with other tables' holds it back. */
  private async visibleVersion(latest: LatestManifest): Promise<number> {
    if (!latest.holds.length) return latest.version;
    const held = await this.heldBack(latest.holds);
    let visible = latest.version;
    while (held.has(visible)) visible--;
    return visible;
  }

  /** The table's own Lance files, for the operations that work on them beside the engine. */
  filesOf(entry: TableEntry): TableFiles {
    return this.filesAt(entry.location);
  }

  /** The files of the table at a location (a claim in the write ledger names its table so). */
  filesAt(location: string): TableFiles {
    return new TableFiles(this.records, this.datasets.root, location, () => this.datasets.forget(location));
  }

  async requireData(entry: TableEntry, what: string) {
    if (await this.isDeclaredOnly(entry)) {
      throw new QuiverError("TableNotFound", `Table '${entry.objectId}' is declared but has no data yet, so it cannot ${what}`);
    }
  }

  async describe(id: Id, at: ReadAt): Promise<TableDescription> {
    return (await this.catalog.resolveWith(id, (entry) => this.describeEntry(entry, at))).value;
  }

  private async describeEntry(entry: TableEntry, at: ReadAt): Promise<TableDescription> {
    // Everything described is fixed by the version's manifest: its etag says whether a description still holds.
    const latest = readsLatestOfMain(at) ? await this.datasets.latestManifest(entry.location) : null;
    if (latest) {
      const visible = await this.visibleVersion(latest);
      if (visible !== latest.version && visible > 0) return this.describeEntry(entry, { ...at, version: visible });
    }
    const cacheKey = latest?.etag ? `${latest.key}\0${latest.etag}` : null;
    const cached = cacheKey === null ? undefined : this.descriptions.get(cacheKey);
    if (cacheKey !== null) countLookup("table_description", cached !== undefined);
    if (cached) return { entry, declaredOnly: false, ...cached };
    const declaredOnly = latest === null && (await this.isDeclaredOnly(entry));
    if (declaredOnly) {
      if (at.version !== undefined || at.tag !== undefined) {
        throw new QuiverError("TableVersionNotFound", `Table '${entry.objectId}' is declared only and has no versions`);
      }
      return { entry, declaredOnly };
    }
    // The listing (with its batch holds) decides which version is the latest, and that version is described: a live
    // handle would follow whatever was committed a moment later, a version a batch may still hold back.
    // The latest manifest, known from the listing, is read beside the engine's open of it rather than after.
    const latestFacts = latest
      ? this.manifestFacts(entry, latest.version, { directory: entry.location, v2: latest.v2, info: latest.info }, at.branch)
      : undefined;
    const table = await this.readHandle(entry, latest ? { ...at, version: latest.version } : at);
    const [version, schemaBuf, stats] = await engineCall("describe table", () => Promise.all([table.version(), table.schema(), table.stats()]));
    const schema: JsonSchema = schemaToJson(tableFromIPC(schemaBuf).schema);
    const facts =
      latestFacts && latest?.version === version
        ? await latestFacts
        : await this.manifestFacts(entry, version, { directory: entry.location, v2: await table.usesV2ManifestPaths() }, at.branch);
    const description = { version, schema, stats, ...facts };
    if (cacheKey !== null && latest?.version === version) this.descriptions.set(cacheKey, description);
    return { entry, declaredOnly, ...description };
  }

  /**
   * What a version's manifest says beyond the engine's statistics: the rows marked deleted and the table's metadata.
   * Read for the main branch; nothing where it cannot be read.
   */
  private async manifestFacts(
    entry: TableEntry,
    version: number,
    source: ManifestSource,
    branch?: string,
  ): Promise<Pick<TableVersionDescription, "deletedRows" | "tableMetadata">> {
    if (namedBranch(branch) !== null) return {};
    try {
      const { summary } = await this.filesOf(entry).manifest(version, source);
      return { deletedRows: Number(summary.metadata.total_deletion_file_rows), tableMetadata: summary.tableMetadata };
    } catch {
      return {};
    }
  }

  async schemaOf(table: NativeTable): Promise<Schema> {
    const ipc = await engineCall("read the schema", () => table.schema());
    const known = this.schemas.get(table);
    if (known?.ipc.equals(ipc)) return known.schema;
    const { schema } = tableFromIPC(ipc);
    this.schemas.set(table, { ipc, schema });
    return schema;
  }
}
