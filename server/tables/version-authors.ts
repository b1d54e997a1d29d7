/**
 * Who made each version of a table. A version Quiver's engine commits under a request's guard names its caller in its
 * own transaction properties (COMMITTED_BY_PROPERTY, beside the requests it applies): no record is written for it.
 * Every other commit Quiver answers (a staged manifest published by CreateTableVersion, a batch's, a compaction's) gets
 * one small object per version at `.quiver/versions/<table location>/<branch>/<version>.json`, naming the commit (the
 * write ledger's id for it). The store's manifests stay the truth of which versions exist (a writer that bypasses the
 * tables adds versions named by neither); a record says who committed a version, with which operation, and is
 * believed only for a manifest written about when it was. The console shows the authors of a managed table's
 * versions; the write ledger reads the records for a claim a root's earlier build left (write-history.ts).
 */
import "server-only";
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { isManagedVersioning, versionAuthor, type VersionAuthor } from "@/lib/contract/catalog";
import type { ObjectStore } from "@/server/storage/object-store";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { metrics } from "@/server/metrics";
import { COMPACTION_OPERATIONS } from "@/server/lance/version-operations";
import type { CommittedBy } from "@/server/lance/version-manifest";
import type { TableFiles } from "@/server/lance/table-files";
import type { ClaimRecord } from "./write-ledger";
import type { BatchAuthor, BatchMember } from "@/server/catalog/batch-holds";
import { versionAt } from "./branch-name";

/** A record and the manifest it names are written by one commit, seconds apart at most; clocks of instances differ a little. */
const SAME_COMMIT_MS = 10 * 60_000;

const record = versionAuthor.extend({ version: z.number().int(), branch: z.string().nullable(), commit: z.string().optional() });
type AuthorRecord = z.output<typeof record>;

const tablePrefix = (location: string) => `.quiver/versions/${location}/`;
const branchPrefix = (location: string, branch?: string) => `${tablePrefix(location)}${encodeURIComponent(branch || "main")}/`;
const recordKey = (location: string, branch: string | undefined, version: number) => `${branchPrefix(location, branch)}${version}.json`;

/** What a write's answer says it did to rows ("2 rows inserted, 1 updated"), for its commit's detail; "" when it says nothing. */
export function rowsChanged(answer: Record<string, unknown>): string {
  const counts = [
    ["inserted", answer.num_inserted_rows],
    ["updated", answer.num_updated_rows ?? answer.updated_rows],
    ["deleted", answer.num_deleted_rows],
  ].filter((c): c is [string, number] => typeof c[1] === "number" && c[1] > 0);
  return counts.map(([what, n], i) => (i === 0 ? `${n} ${n === 1 ? "row" : "rows"} ${what}` : `${n} ${what}`)).join(", ");
}

/** A version a call committed, on a table it names; `commit` is the write ledger's id for the commit. */
/** What recording authors asks of the tables (Tables): a table's catalogued entry and files, and the records' store. */
interface RecordingTables {
  readonly records: ObjectStore;
  knownEntry(id: string[]): Promise<TableEntry>;
  filesOf(entry: TableEntry): TableFiles;
}

export interface Commit {
  table: string[];
  version: number;
  branch?: string;
  detail?: string;
  commit?: string;
  /** The version names who committed it in its own transaction (a guarded commit's): no record is written. */
  namesItsCaller?: boolean;
}

/**
 * Whether this process wrote a record (or will have, once the write under way answers), by the write ledger's id of
 * the commit and the version: the requests of a group of appends answer one commit, and the first of them to get here
 * records it for all (the others would each ask the store to write it again, and be refused). A record that failed
 * is tried again by the next.
 */
const recording = new LRUCache<string, Promise<boolean>>({ max: 10_000 });

/**
 * Records who committed the versions a call made, and counts every commit in the metrics. A record never replaces
 * another: the first commit of a version is the one that made it.
 */
export async function recordCommits(tables: RecordingTables, commits: Commit[], principal: VersionAuthor["principal"], operation: string) {
  await Promise.all(
    commits.map(async (c) => {
      const entry = await tables.knownEntry(c.table);
      const managed = isManagedVersioning(entry.properties);
      metrics.commits.inc({ operation, managed: String(managed) });
      if (c.namesItsCaller) return;
      // One per table and version: a batch's commit makes a version of each of its tables, often of one number.
      const shared = c.commit ? `${c.commit} ${entry.location} ${c.branch || "main"} ${c.version}` : null;
      // Looked up and set with no wait between: the members of a group come here within the same moment.
      const earlier = shared ? recording.get(shared) : undefined;
      if (earlier && (await earlier)) return;
      const body: AuthorRecord = {
        version: c.version,
        branch: c.branch || null,
        principal,
        operation,
        detail: c.detail ?? null,
        time: new Date().toISOString(),
        ...(c.commit ? { commit: c.commit } : {}),
      };
      const writing = tables.records.putIfAbsent(recordKey(entry.location, c.branch, c.version), JSON.stringify(body));
      if (shared)
        recording.set(
          shared,
          writing.then(
            () => true,
            () => false,
          ),
        );
      await writing;
    }),
  );
}

/**
 * Records the versions of a batch that a reader finished (batch-finish.ts) as the batch's own answer would have: each
 * by the batch's caller, under its commit.
 */
export function recordFinishedBatch(tables: RecordingTables, author: BatchAuthor, members: BatchMember[]) {
  const detail = (m: BatchMember) => `${versionAt(m.version, m.branch)}, published by a reader after the batch's instance stopped`;
  const commits = members.map((m) => ({ table: m.table, version: m.version, branch: m.branch, commit: author.commit, detail: detail(m) }));
  return recordCommits(tables, commits, author.principal, author.operation);
}

/**
 * Records the version a write whose instance stopped before answering was found to have made (write-history.ts),
 * as that write's own record would have named it.
 */
export async function recordDecided(store: ObjectStore, claim: ClaimRecord, version: number, committedAt: number) {
  const { location, branch, commit } = claim.shape;
  const body: AuthorRecord = {
    version,
    branch,
    principal: claim.principal,
    operation: claim.operation,
    detail: `${versionAt(version, branch ?? undefined)}, found in the table's history after the instance that committed it stopped`,
    time: new Date(committedAt).toISOString(),
    commit,
  };
  await store.putIfAbsent(recordKey(location, branch ?? undefined, version), JSON.stringify(body));
}

/**
 * Records a maintenance job as the author of the versions its compaction made: those after `before` up to `after`
 * whose transaction is a compaction's (users' writes committed meanwhile keep their own records).
 */
export async function recordCompaction(tables: RecordingTables, entry: TableEntry, before: number, after: number, job: { id: string; requestedBy: string }) {
  if (after <= before) return;
  const files = tables.filesOf(entry);
  const { sources } = await files.versions(entry.location);
  const made: Commit[] = [];
  for (let version = before + 1; version <= after; version++) {
    const source = sources.get(version);
    if (!source) continue;
    const done = await files.operation(version, source, await files.manifest(version, source), sources.get(version - 1));
    if (done && COMPACTION_OPERATIONS.has(done.operation)) made.push({ table: entry.id, version, detail: `${done.operation}, ${done.action}` });
  }
  await recordCommits(tables, made, { kind: "maintenance", id: job.id, name: `maintenance (${job.requestedBy})` }, "Compact");
}

/**
 * Who made each of the given versions: named by the version itself (`committedBy`, a guarded commit's transaction
 * property), or else where the tables recorded it. A record is believed for a version whose manifest was written near
 * the record's time, so that a record of a dropped table's version, or of a version number that was taken back and
 * then committed again by a writer outside the tables, names nobody.
 */
export async function authorsOf(
  store: ObjectStore,
  entry: TableEntry,
  branch: string | undefined,
  versions: Array<{ version: number; timestamp_millis: number; operation?: string | null; action?: string | null; committedBy: CommittedBy | null }>,
): Promise<Map<number, VersionAuthor>> {
  const found = new Map<number, VersionAuthor>();
  if (!isManagedVersioning(entry.properties)) return found;
  await Promise.all(
    versions.map(async ({ version, timestamp_millis, operation: lanceOperation, action, committedBy }) => {
      if (committedBy) {
        // As a published manifest's commit is described: the version, then what Lance says it did.
        const did = [lanceOperation, action].filter(Boolean).join(", ");
        const detail = `${versionAt(version, branch)}${did ? `: ${did}` : ""}`;
        return void found.set(version, { ...committedBy, detail, time: new Date(timestamp_millis).toISOString() });
      }
      const body = await store.get(recordKey(entry.location, branch, version));
      if (!body) return;
      const parsed = record.safeParse(JSON.parse(body.toString("utf8")));
      if (!parsed.success || parsed.data.version !== version) return;
      if (Math.abs(Date.parse(parsed.data.time) - timestamp_millis) > SAME_COMMIT_MS) return;
      const { principal, operation, detail, time } = parsed.data;
      found.set(version, { principal, operation, detail, time });
    }),
  );
  return found;
}

/** The commits recorded for a branch's versions above `after`, by version. */
export async function commitsRecorded(store: ObjectStore, location: string, branch: string | null, after: number): Promise<Map<number, string | null>> {
  const prefix = branchPrefix(location, branch ?? undefined);
  const versions = (await store.list(prefix))
    .map((key) => Number(/^(\d+)\.json$/.exec(key.slice(prefix.length))?.[1]))
    .filter((version) => Number.isInteger(version) && version > after);
  const found = new Map<number, string | null>();
  await Promise.all(
    versions.map(async (version) => {
      const body = await store.get(recordKey(location, branch ?? undefined, version));
      const parsed = body ? record.safeParse(JSON.parse(body.toString("utf8"))) : null;
      found.set(version, parsed?.success ? (parsed.data.commit ?? null) : null);
    }),
  );
  return found;
}

/** Removes the records of a branch's versions that no longer exist (after cleanup or a deletion of versions). */
export async function pruneAuthors(store: ObjectStore, entry: TableEntry, branch: string | undefined, existing: ReadonlySet<number>) {
  const prefix = branchPrefix(entry.location, branch);
  const keys = await store.list(prefix);
  const gone = keys.filter((key) => {
    const version = Number(/^(\d+)\.json$/.exec(key.slice(prefix.length))?.[1]);
    return Number.isInteger(version) && !existing.has(version);
  });
  await Promise.all(gone.map((key) => store.delete(key)));
  return gone.length;
}

/** Forgets every record of a dropped table. */
export async function forgetAuthors(store: ObjectStore, entry: TableEntry) {
  await store.deletePrefix(tablePrefix(entry.location));
}
