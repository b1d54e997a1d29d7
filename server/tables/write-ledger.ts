/**
 * The ledger of table writes: each write request is applied at most once, whichever instance dies or whoever
 * retries. A request is known by who sent it, the table (or batch) it writes and its request id (`Idempotency-Key`,
 * or `x-request-id`, which LanceDB's clients send on every call and keep across their own retries of most writes).
 *
 * Each attempt at a request leaves small records under `.quiver/requests/<key>/`, every one written only where none
 * exists: `<n>.claim`, written in the table's write turn beside the look the commit makes anyway, before the commit
 * starts (where the commit goes and how it is known there, so that its outcome can be read from the table's records);
 * `<n>.lease-<k>`, written while a long commit runs where others may need to know it still runs (below); and
 * `<n>.answer`, written beside the audit entry before the answer leaves (the answer itself, for a commit: a repeat is
 * answered with it), except where the version that names the request gives the whole answer (an insert's: its
 * version and its body's rows). A guarded commit's outcome is read from the versions, at once: the version naming the
 * request, or none, and the repeat runs (of two attempts, the later to commit publishes nothing). Any other attempt
 * whose instance died leaves a claim alone: once no record has come for a lease's time, whoever asks reads from the
 * table's records whether the commit landed (write-history.ts) and writes `<n>.decision`.
 *
 * LanceDB's 0.39 client retries an insert or a merge-insert that answered 429, 500, 502 or 503 with a new request
 * id; a load balancer answers 502 when the instance it sent the write to died, possibly after that write committed.
 * So inserts and merge-inserts also leave a marker under `same-body/<digest of caller, table and body>/`: a write
 * whose body an earlier attempt sent is, when that attempt's instance died before answering, its retry. The marker is
 * left before the write's turn (beside its first look at the table), so that the turn holds the claim alone; a marker
 * without a claim is a write waiting for its turn, until a lease has passed.
 */
import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomUUID } from "node:crypto";
import { config } from "@/server/config";
import { INSTANCE } from "@/server/instance";
import { log } from "@/server/log";
import { traced } from "@/server/tracing";
import type { ObjectStore } from "@/server/storage/object-store";
import type { BatchChanges, BatchMember } from "@/server/catalog/batch-holds";
import type { BatchState } from "@/server/catalog/catalog-table";
import { manifestKey } from "@/server/lance/version-manifest";

const PREFIX = ".quiver/requests/";
const SAME_BODY = `${PREFIX}same-body/`;

/** Where a commit goes and how its table's records know it, so that a dead attempt's outcome can be read from there. */
export interface CommitShape {
  /** The table's location; the directory whose `_versions/` the commit adds to (the table's, or a branch's), and the branch. */
  location: string;
  directory: string;
  branch: string | null;
  /** The latest version when the claim was made: what the commit makes lies above it. */
  after: number;
  /** A commit of one named version (CreateTableVersion), and the manifest it publishes. */
  version?: { number: number; staged: string };
  /** The commit's identity in the version records: one per group of appends, shared by its members. */
  commit: string;
  /** Set on a claim an earlier build made for a batch that changed the catalog, which no record decides. */
  undecidable?: string;
  /** A batch of staged versions: what a retry of an interrupted one reads to finish it (BatchOfVersions). */
  batch?: BatchOfVersions;
  /**
   * Set when the commit is guarded (Tables.guardCommit): the version it makes names the request, and it is made only
   * where no version since the request's first claim does. Its outcome is then read from the versions alone.
   */
  named?: true;
}

/**
 * A batch (BatchCreateTableVersions, BatchCommitTables): each version it publishes and the manifest staged for it,
 * the record that holds them back from readers until all are published (batch-holds.ts), and what else it changes.
 * Each version is published by one create-only write, and a staged manifest goes only once the batch's answer is
 * recorded, so a retry of a batch whose instance stopped reads which of its versions are already the manifests it
 * staged, publishes the rest under the same hold, and lets them all appear at once; a batch with other changes is
 * decided by its row in the catalog, which every attempt reads (batch-finish.ts).
 */
export interface BatchOfVersions {
  hold: string;
  members: BatchMember[];
  /** A batch that declares or deregisters tables or deletes versions too, decided in the catalog (batch-finish.ts). */
  changes?: BatchChanges;
}

export interface ClaimRecord {
  attempt: string;
  n: number;
  /** The request's key (a claim of an earlier release does not say it: its path does). */
  key: string;
  /**
   * The lowest version any attempt of the request may have built on (this claim's and every earlier one's `after`):
   * a version that names the request lies above it. Older claims do not say it.
   */
  since?: number;
  /** The request id (or Idempotency-Key) the client sent, to find its records by what the client saw. */
  requestId: string;
  instance: string;
  time: string;
  /** The attempt's marker among writes of the same body, where it left one. */
  marker?: string;
  fingerprint: string;
  operation: string;
  /** Rows the request's own body holds, for the answer of an insert decided from the history. */
  rows: number | null;
  principal: WriteRequest["principal"];
  shape: CommitShape;
}

interface AnswerRecord {
  attempt: string;
  outcome: "committed" | "undecided";
  status?: number;
  body?: unknown;
  time: string;
}

/** A commit decided from the table's history: its version, and what the manifests say its answer counted. */
export interface Decided {
  version: number;
  counts: { inserted: number; updated: number; deleted: number };
}

interface DecisionRecord {
  attempt: string;
  landed: Decided | null;
  /** What in the history decided it. */
  why: string;
  time: string;
}

/** What the table's records say of a dead attempt's commit. */
export type Verdict = { landed: Decided | null; why: string } | { undecidable: string };

/** One write request as the ledger knows it. */
export interface WriteRequest {
  key: string;
  /** The id the client gave (or the one the server made up), for messages. */
  requestId: string;
  /** Digest of the operation, its query and its body: a repeat must ask the same. */
  fingerprint: string;
  /** Where writes of the same body by the same caller to the same table are found (inserts and merges), or null. */
  sameBody: string | null;
  /** The version a commit naming the request makes gives its whole answer: none is recorded (an insert's). */
  answeredByVersion: boolean;
  operation: string;
  rows: number | null;
  /** The branch the request writes (null: main). */
  branch: string | null;
  /** Who sent it, as the version records name their authors. */
  principal: { kind: string; id: string; name: string };
  /** The database and the path it was sent to, as its audit entry names them. */
  database: string;
  path: string;
}

/** What became of a request's earlier attempts. */
export type Settled =
  | { kind: "committed"; status: number; body: unknown; marker?: string }
  /** `stopped`: decided once its instance went quiet; otherwise read from the version naming it, at once. */
  | { kind: "decided"; decided: Decided; stopped: boolean; marker?: string }
  | { kind: "free"; next: number }
  | { kind: "running" }
  | { kind: "undecidable"; reason: string }
  | { kind: "different-request" };

/**
 * Thrown at a commit point instead of committing: an earlier attempt holds the request's key (`sameBody` false), or
 * earlier writes of the same body may be this one (`sameBody` true). The dispatcher settles them and answers.
 */
export class EarlierAttempt extends Error {
  override name = "EarlierAttempt";
  constructor(
    /** The earlier requests' keys, with their markers among writes of the same body. */
    readonly earlier: Array<{ key: string; marker?: string }>,
    readonly sameBody: boolean,
  ) {
    super(sameBody ? "earlier writes of the same body are in the ledger" : "the request is already in the ledger");
  }
}

/** The request whose write the code below the dispatcher is committing, where the ledger covers it. */
export const currentWrite = new AsyncLocalStorage<WriteTicket>();

const now = () => Date.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const parse = <T>(body: Buffer | null): T | null => {
  if (!body) return null;
  try {
    return JSON.parse(body.toString("utf8")) as T;
  } catch {
    return null;
  }
};

/**
 * Waits for all of `works` and then fails with the first failure, if any: unlike Promise.all, no write is still landing
 * once the caller moves on (a marker put after the removal meant for it would stay).
 */
export async function allLanded<T extends readonly unknown[]>(works: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(works);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/** A request's key: who, which table (or "batch") and which request id, digested into a plain store key. */
export function requestKey(principal: string, database: string, target: string, requestId: string): string {
  return createHash("sha256").update(["quiver-write", principal, database, target, requestId].join("\0")).digest("hex").slice(0, 40);
}

export function sameBodyKey(principal: string, database: string, target: string, fingerprint: string): string {
  return createHash("sha256").update(["quiver-same-body", principal, database, target, fingerprint].join("\0")).digest("hex").slice(0, 40);
}

/** One request's part in the ledger: its claim, once made, and the lease it keeps while its commit runs. */
export class WriteTicket {
  /** The attempt the next claim makes. */
  attempt = 1;
  claimed: { n: number; record: ClaimRecord } | null = null;
  /** Earlier writes of the same body already settled as not this one. */
  readonly notThisOne = new Set<string>();
  /** Set when the request was answered with an earlier attempt's answer: says so, for the audit log. */
  replayed: string | null = null;
  /**
   * The marker among writes of the same body that this request's answer settles: its own attempt's, or that of the
   * earlier attempt it was answered for. It goes once the answer reaches the connection (WriteLedger.answerSent).
   */
  marker: string | null = null;
  /** The marker this request left among writes of its body, before or beside its claim. */
  ownMarker: string | null = null;
  /** The latest version the write saw before its commit, where it looked: what it commits lies above it. */
  seen: number | null = null;
  /** The etag of that version's manifest, where the write's look found one. */
  seenEtag: string | null = null;
  /** The lowest version an earlier attempt of the request may have built on, as its claim said: the next claim's `since`. */
  since: number | null = null;
  /** The batch of versions an earlier attempt of the request began and stopped in: this attempt finishes it. */
  resumes: BatchOfVersions | null = null;
  /** Set when the commit's guard found the request applied by another attempt, at this version: nothing was committed. */
  appliedAt: number | null = null;
  /** The version the commit's guard last let through, which names the request and its caller: the commit's, once landed. */
  admittedAt: number | null = null;
  /** Set once the commit began: a failure from then on may have left it landed. */
  commitStarted = false;
  /** Set once the commit returned: the write landed whatever happens after. */
  landed = false;
  private lease: { timer: NodeJS.Timeout | null; lastRenewal: number; end: () => void } | null = null;

  constructor(readonly request: WriteRequest) {}

  /**
   * Holds the claimed attempt until `endLease`, which settles what this answers, for repeats at this process; with
   * `renewing`, renews its lease in the ledger meanwhile, so that other instances can tell it is still under way.
   */
  startLease(ledger: WriteLedger, n: number, renewing: boolean): Promise<void> {
    let k = 0;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const renew = () =>
      void ledger
        .renew(this.request.key, n, ++k)
        .then(() => {
          if (this.lease) this.lease.lastRenewal = now();
        })
        .catch((err: unknown) => log.warn({ err, request_id: this.request.requestId }, "renewing a write's lease failed"));
    const timer = renewing ? setInterval(renew, config.writeLeaseMs / 3).unref() : null;
    this.lease = { timer, lastRenewal: now(), end };
    return ended;
  }

  /** True when no renewal reached the store for long enough that another instance may have taken the write for dead. */
  get mayHaveBeenTakenForDead(): boolean {
    return this.lease?.timer != null && now() - this.lease.lastRenewal > config.writeLeaseMs / 2;
  }

  endLease() {
    if (!this.lease) return;
    if (this.lease.timer) clearInterval(this.lease.timer);
    this.lease.end();
    this.lease = null;
  }
}

interface RequestState {
  n: number;
  claim: ClaimRecord | null;
  answer: AnswerRecord | null;
  decision: DecisionRecord | null;
  /** What the listing showed, to tell whether anything came since the last look. */
  signature: string;
}

/** How long a repeat waits at most for an earlier attempt that is still under way. */
const LONGEST_WAIT_MS = 30_000;

export class WriteLedger {
  /** Requests whose attempt this process is running, by key: settled when the attempt's answer is recorded. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly store: ObjectStore,
    /** Reads the table's records for a claim whose attempt ended without saying how. */
    private readonly decide: (claim: ClaimRecord) => Promise<Verdict>,
    /** A batch's decision in the catalog, for one that changes the catalog (batch-finish.ts). */
    private readonly batchDecision: (hold: string) => Promise<BatchState | undefined> = async () => undefined,
  ) {}

  /**
   * Claims the ticket's next attempt before its commit. Throws EarlierAttempt when another attempt holds the key, or
   * when an earlier write of the same body may be this one; the caller then commits nothing.
   */
  claim(ticket: WriteTicket, shape: CommitShape): Promise<void> {
    return traced(
      "write ledger: claim",
      () => ({ "quiver.request_id": ticket.request.requestId }),
      () => this.claimNow(ticket, shape),
    );
  }

  private async claimNow(ticket: WriteTicket, shape: CommitShape): Promise<void> {
    if (ticket.claimed) return;
    const { key } = ticket.request;
    const n = ticket.attempt;
    // Beside the claim when the write did not look for writes of its body before its turn (lookForSameBody).
    const looking = ticket.ownMarker ? null : this.markSameBody(ticket);
    const marker = ticket.ownMarker;
    const record: ClaimRecord = {
      attempt: randomUUID(),
      n,
      key,
      since: Math.min(shape.after, ticket.since ?? shape.after),
      requestId: ticket.request.requestId,
      instance: INSTANCE,
      time: new Date().toISOString(),
      ...(marker ? { marker } : {}),
      fingerprint: ticket.request.fingerprint,
      operation: ticket.request.operation,
      rows: ticket.request.rows,
      principal: ticket.request.principal,
      shape,
    };
    const [written, earlier] = await allLanded([this.store.putIfAbsent(`${PREFIX}${key}/${n}.claim`, JSON.stringify(record)), looking ?? []] as const);
    // A write whose answer was lost and that the store client sent again finds its own claim there.
    if (!written && (await this.readClaim(key, n))?.attempt !== record.attempt) {
      await this.dropOwnMarker(ticket);
      throw new EarlierAttempt([{ key }], false);
    }
    ticket.claimed = { n, record };
    if (earlier.length) {
      // Settled first; this attempt commits nothing.
      await this.release(ticket);
      throw new EarlierAttempt(earlier, true);
    }
    // A named commit's fate is read from the versions, whoever asks: only a write that others may take for a write
    // of the same body under another id tells them it is still under way (settleSameBody).
    const ended = ticket.startLease(this, n, ticket.request.sameBody !== null || !shape.named);
    this.running.set(key, ended);
    void ended.then(() => {
      if (this.running.get(key) === ended) this.running.delete(key);
    });
  }

  /**
   * Leaves the write's marker among writes of its body and looks for earlier ones, before its turn, beside the first
   * look at its table: the turn then holds the claim alone. Throws EarlierAttempt when an earlier write of the same
   * body may be this one; the caller then commits nothing. Nothing for a write that has no body to be known by.
   */
  async lookForSameBody(ticket: WriteTicket): Promise<void> {
    if (ticket.ownMarker || ticket.claimed || !ticket.request.sameBody) return;
    await traced(
      "write ledger: same-body look",
      () => ({ "quiver.request_id": ticket.request.requestId }),
      async () => {
        const earlier = await this.markSameBody(ticket);
        if (!earlier.length) return;
        await this.dropOwnMarker(ticket);
        throw new EarlierAttempt(earlier, true);
      },
    );
  }

  /** Writes the ticket's marker (named at once, before any wait) and answers the earlier writes of the same body. */
  private async markSameBody(ticket: WriteTicket): Promise<Array<{ key: string; marker: string }>> {
    const { key, sameBody } = ticket.request;
    if (!sameBody) return [];
    const marker = `${SAME_BODY}${sameBody}/${String(now()).padStart(14, "0")}-${key}`;
    ticket.ownMarker = ticket.marker = marker;
    const [earlier] = await allLanded([this.sameBodyBefore(sameBody, marker, ticket), this.store.put(marker, "")] as const);
    return earlier;
  }

  /** Removes the marker the ticket left, for an attempt that commits nothing. */
  private async dropOwnMarker(ticket: WriteTicket): Promise<void> {
    const own = ticket.ownMarker;
    if (!own) return;
    await this.store.delete(own);
    ticket.ownMarker = null;
    if (ticket.marker === own) ticket.marker = null;
  }

  /** Writes of the same body that began before the marker and are not yet known to be other writes. */
  private async sameBodyBefore(sameBody: string, marker: string, ticket: WriteTicket): Promise<Array<{ key: string; marker: string }>> {
    const prefix = `${SAME_BODY}${sameBody}/`;
    const oldest = now() - config.idempotencyWindowMs;
    const names = (await this.store.list(prefix)).map((k) => k.slice(prefix.length));
    const mine = marker.slice(prefix.length);
    return names
      .filter((name) => name < mine && Number(name.slice(0, 14)) >= oldest)
      .map((name) => ({ key: name.slice(15), marker: `${prefix}${name}` }))
      .filter(({ key }) => key !== ticket.request.key && !ticket.notThisOne.has(key));
  }

  renew(key: string, n: number, k: number) {
    return this.store.put(`${PREFIX}${key}/${n}.lease-${k}`, JSON.stringify({ time: new Date().toISOString() }));
  }

  /**
   * Records how the ticket's claimed attempt ended: the answer of a commit (or that its outcome is unknown), before the
   * answer leaves. An attempt that committed nothing gives its claim up, so that the request may be tried again.
   * When it claimed nothing (nothing was committed), only the marker it left among writes of its body goes.
   */
  finish(ticket: WriteTicket, ending: { outcome: "committed" | "undecided" | "not-committed"; status?: number; body?: unknown }): Promise<void> {
    return traced(
      "write ledger: answer",
      () => ({ "quiver.request_id": ticket.request.requestId, "quiver.outcome": ending.outcome }),
      () => this.finishNow(ticket, ending),
    );
  }

  private async finishNow(
    ticket: WriteTicket,
    ending: { outcome: "committed" | "undecided" | "not-committed"; status?: number; body?: unknown },
  ): Promise<void> {
    const claimed = ticket.claimed;
    // An attempt that claimed nothing committed nothing: the marker it left before its turn goes.
    if (!claimed) return this.dropOwnMarker(ticket);
    const { key } = ticket.request;
    const takenForDead = ticket.mayHaveBeenTakenForDead;
    try {
      if (ending.outcome === "not-committed") {
        await Promise.all([this.store.delete(`${PREFIX}${key}/${claimed.n}.claim`), this.dropOwnMarker(ticket)]);
        return;
      }
      // Its version names the request and gives its whole answer: a repeat reads it from there.
      if (ending.outcome === "committed" && ticket.landed && claimed.record.shape.named && ticket.request.answeredByVersion) return;
      const answer: AnswerRecord = {
        attempt: claimed.record.attempt,
        outcome: ending.outcome,
        status: ending.status,
        body: ending.body,
        time: new Date().toISOString(),
      };
      await this.store.putIfAbsent(`${PREFIX}${key}/${claimed.n}.answer`, JSON.stringify(answer));
    } finally {
      ticket.endLease();
    }
    if (takenForDead && ending.outcome === "committed") {
      const decision = parse<DecisionRecord>(await this.store.get(`${PREFIX}${key}/${claimed.n}.decision`));
      if (decision && decision.landed === null) {
        log.error(
          { request_id: ticket.request.requestId, key },
          "a write committed after another instance, hearing nothing from it for a lease's time, decided that it had not: a retry of it may have committed it again",
        );
      }
    }
  }

  /**
   * The ticket's answer has reached the connection: the marker it settles goes (its own attempt's, or the earlier
   * attempt's it was answered for), so that a later write of the same body is taken for a new write. (A marker that
   * stays after an answer says the answer may not have reached its client: a write of the same body after it is then
   * its retry, and one such retry is answered for it.)
   */
  async answerSent(ticket: WriteTicket): Promise<void> {
    const marker = ticket.marker;
    if (!marker) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.delete(marker);
        return;
      } catch (err) {
        if (attempt === 2) return log.error({ err, request_id: ticket.request.requestId }, "removing an answered write's marker failed");
        await sleep(200 * (attempt + 1));
      }
    }
  }

  /**
   * What an earlier write of the same body (its key and marker) was: this write's first try, when it committed and its
   * answer never reached the client (its instance stopped first: decided from the history, or answered but its marker
   * never removed); another write when it was answered and its marker went, or when it committed nothing.
   */
  async settleSameBody(key: string, marker: string, asking?: WriteTicket): Promise<Settled | { kind: "another" }> {
    const began = now();
    const markedAt = Number(marker.slice(marker.lastIndexOf("/") + 1, marker.lastIndexOf("/") + 15));
    for (;;) {
      const settled = await this.settle(key, null, asking);
      if (settled.kind === "free") {
        // Marked before its turn and not claimed yet: it claims once its turn comes, unless its instance stopped.
        if (now() - markedAt < config.writeLeaseMs && (await this.store.head(marker))) {
          if (now() - began >= LONGEST_WAIT_MS) return { kind: "running" };
          await sleep(100);
          continue;
        }
        return { kind: "another" };
      }
      // Committed and not known to have stopped: while its marker stays, its answer may be on its way to its client
      // (then this is another write), or its instance stopped before it was sent (then this is its retry).
      const mayBeAnswering = settled.kind === "committed" || (settled.kind === "decided" && !settled.stopped);
      if (!mayBeAnswering) return settled;
      for (let pause = 50; await this.store.head(marker); pause = Math.min(pause * 2, 500)) {
        if (now() - began >= config.writeLeaseMs) return settled;
        await sleep(pause);
      }
      return { kind: "another" };
    }
  }

  /** Gives up the ticket's claimed attempt before its commit began: it committed nothing, and the next attempt may. */
  async release(ticket: WriteTicket): Promise<void> {
    await this.finish(ticket, { outcome: "not-committed" });
    ticket.claimed = null;
    ticket.commitStarted = false;
  }

  /** Answers a request with the outcome of another (an earlier write of the same body), recorded as its own. */
  async adopt(ticket: WriteTicket, settled: { status: number; body: unknown }): Promise<void> {
    const { key, requestId, fingerprint, operation, rows, principal } = ticket.request;
    const n = ticket.attempt;
    const attempt = randomUUID();
    const claim: ClaimRecord = {
      attempt,
      n,
      key,
      requestId,
      instance: INSTANCE,
      time: new Date().toISOString(),
      fingerprint,
      operation,
      rows,
      principal,
      shape: {
        location: "",
        directory: "",
        branch: null,
        after: 0,
        commit: attempt,
        undecidable: "answered as an earlier write of the same body",
      },
    };
    if (!(await this.store.putIfAbsent(`${PREFIX}${key}/${n}.claim`, JSON.stringify(claim)))) throw new EarlierAttempt([{ key }], false);
    const answer: AnswerRecord = { attempt, outcome: "committed", status: settled.status, body: settled.body, time: claim.time };
    await this.store.putIfAbsent(`${PREFIX}${key}/${n}.answer`, JSON.stringify(answer));
  }

  private async readClaim(key: string, n: number): Promise<ClaimRecord | null> {
    const claim = parse<ClaimRecord>(await this.store.get(`${PREFIX}${key}/${n}.claim`));
    return claim && { ...claim, key };
  }

  /** The request's newest attempt and its records, in one listing (and a read of each record it shows). */
  private async state(key: string): Promise<RequestState | null> {
    const listed = await this.store.listInfo(`${PREFIX}${key}/`);
    const names = [...listed.keys()].map((k) => k.slice(PREFIX.length + key.length + 1));
    const attempts = names.map((name) => Number(/^(\d+)\.claim$/.exec(name)?.[1])).filter((n) => Number.isInteger(n));
    if (attempts.length === 0) return null;
    const n = Math.max(...attempts);
    const has = (kind: string) => names.includes(`${n}.${kind}`);
    const read = <T>(kind: string) => (has(kind) ? this.store.get(`${PREFIX}${key}/${n}.${kind}`).then((b) => parse<T>(b)) : Promise.resolve(null));
    const [claimed, answer, decision] = await Promise.all([read<ClaimRecord>("claim"), read<AnswerRecord>("answer"), read<DecisionRecord>("decision")]);
    const claim = claimed && { ...claimed, key };
    // A claim given up and made again by another attempt has the same name: its etag tells them apart.
    const signature = [...listed].map(([name, info]) => `${name} ${info.etag}`).join("\n");
    return { n, claim, answer, decision, signature };
  }

  /**
   * What became of a write, by its id in the ledger (what its answer gave as `transaction_id`), for DescribeTransaction:
   * succeeded (with the version it made) once answered or decided as committed, failed once decided as not, and
   * running until then; null when the ledger holds nothing of it (a write refused before its commit leaves nothing).
   */
  async describe(key: string): Promise<{ claim: ClaimRecord; status: "Running" | "Succeeded" | "Failed"; version?: number } | null> {
    const state = await this.state(key);
    if (!state?.claim) return null;
    const { claim, answer, decision } = state;
    if (answer?.outcome === "committed") return { claim, status: "Succeeded", version: versionIn(answer.body) };
    const named = await this.versionNaming(claim);
    if (named) return { claim, status: "Succeeded", version: named.version };
    if (decision?.landed) return { claim, status: "Succeeded", version: decision.landed.version };
    // A batch that changes the catalog is what its row there says, whichever attempt decided it.
    if (claim.shape.batch?.changes) {
      const decided = await this.batchDecision(claim.shape.batch.hold);
      return { claim, status: decided === "committed" ? "Succeeded" : decided === "aborted" ? "Failed" : "Running" };
    }
    // A batch of versions whose instance stopped is finished by its retry or by a reader (batch-finish.ts): done once
    // every version is the manifest staged for it, whatever its decision said while it was not.
    if (claim.shape.batch && (await this.batchPublished(claim.shape.batch))) return { claim, status: "Succeeded" };
    return { claim, status: decision ? "Failed" : "Running" };
  }

  /** Whether every version of a batch is published, as the very manifest staged for it. */
  private async batchPublished({ members }: BatchOfVersions): Promise<boolean> {
    const each = await Promise.all(
      members.map(async (m) => {
        const [there, staged] = await Promise.all([this.store.get(manifestKey(m.directory, m.version, m.v2)), this.store.get(m.staged)]);
        return !!there && !!staged && there.equals(staged);
      }),
    );
    return each.every(Boolean);
  }

  /**
   * What became of the request's earlier attempts: waits while one is under way (up to a limit), and reads from the
   * table's records the outcome of one whose instance stopped without answering. With `fingerprint`, a request that
   * asked something else under the same key is told so; `asking`, the request that asks, learns from the claims the
   * lowest version its own commit must look for the request's version from.
   */
  async settle(key: string, fingerprint: string | null, asking?: WriteTicket): Promise<Settled> {
    const began = now();
    let seen = "";
    let quietSince = now();
    for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
      const state = await this.state(key);
      if (!state?.claim) return { kind: "free", next: (state?.n ?? 0) + 1 };
      const { n, claim, answer, decision } = state;
      if (Date.parse(claim.time) < now() - config.idempotencyWindowMs) return { kind: "free", next: n + 1 };
      if (fingerprint !== null && claim.fingerprint !== fingerprint) return { kind: "different-request" };
      // The next attempt's commit must look for the request's version from as low as any attempt built on.
      if (asking && asking.request.key === key) {
        asking.since = Math.min(asking.since ?? Infinity, claim.since ?? claim.shape.after);
        asking.resumes = claim.shape.batch ?? null;
      }
      if (answer?.outcome === "committed") return { kind: "committed", status: answer.status ?? 200, body: answer.body, marker: claim.marker };
      const named = await this.versionNaming(claim);
      if (named) return { kind: "decided", decided: named, stopped: false, marker: claim.marker };
      if (decision) return settledBy(decision, claim);
      const local = this.running.get(key);
      if (local) {
        const waited = await Promise.race([local.then(() => true), sleep(Math.max(0, began + LONGEST_WAIT_MS - now())).then(() => false)]);
        if (!waited) return { kind: "running" };
        continue;
      }
      // No version names it, running or stopped: the request's next attempt may go at once, for of two attempts
      // committing, the later finds the earlier's version and commits nothing (Tables.guardCommit).
      if (claim.shape.named && asking?.request.key === key) return { kind: "free", next: n + 1 };
      if (state.signature !== seen) {
        seen = state.signature;
        quietSince = now();
      }
      // Nothing came from the attempt's instance for a lease's time (or it said it could not tell): it has stopped.
      if (answer?.outcome === "undecided" || now() - quietSince >= config.writeLeaseMs) {
        return this.decideOnce(key, state);
      }
      if (now() - began >= LONGEST_WAIT_MS) return { kind: "running" };
      await sleep(pause);
    }
  }

  /** A guarded commit names the request in its version: found there, it landed, whatever was decided before. */
  private async versionNaming(claim: ClaimRecord): Promise<Decided | null> {
    if (!claim.shape.named) return null;
    const verdict = await this.decide(claim);
    return "landed" in verdict && verdict.landed ? verdict.landed : null;
  }

  /** Decides a stopped attempt's outcome from the table's records and records the decision. */
  private async decideOnce(key: string, { claim }: RequestState): Promise<Settled> {
    const verdict = await this.decide(claim!);
    if ("undecidable" in verdict) return { kind: "undecidable", reason: verdict.undecidable };
    const record: DecisionRecord = { attempt: claim!.attempt, landed: verdict.landed, why: verdict.why, time: new Date().toISOString() };
    const decisionKey = `${PREFIX}${key}/${claim!.n}.decision`;
    const written = await this.store.putIfAbsent(decisionKey, JSON.stringify(record));
    const decision = written ? record : (parse<DecisionRecord>(await this.store.get(decisionKey)) ?? record);
    log.warn(
      { key, request_id: claim!.requestId, attempt: claim!.attempt, operation: claim!.operation, landed: decision.landed?.version ?? null, why: decision.why },
      "a write whose instance stopped before answering was decided from the table's records",
    );
    return settledBy(decision, claim!);
  }

  /**
   * Deletes the records of requests older than the idempotency window, and the staged manifests their claims name
   * whose versions are published (a batch a reader finished, or whose answer could not be recorded, leaves them for
   * its retry, which is no longer answered from its records once they go). A staged manifest whose version was never
   * made stays: its writer may still be resolving that commit.
   */
  async sweep(): Promise<number> {
    const listed = await this.store.listInfo(PREFIX);
    const oldest = now() - config.idempotencyWindowMs;
    const newestOf = new Map<string, number>();
    for (const [key, info] of listed) {
      const group = key.startsWith(SAME_BODY) ? key : key.slice(0, key.lastIndexOf("/"));
      newestOf.set(group, Math.max(newestOf.get(group) ?? 0, info.modified ?? now()));
    }
    const expired = [...listed.keys()].filter((key) => {
      const group = key.startsWith(SAME_BODY) ? key : key.slice(0, key.lastIndexOf("/"));
      return (newestOf.get(group) ?? now()) < oldest;
    });
    for (const key of expired) {
      if (key.endsWith(".claim")) {
        for (const { staged, published } of stagedBy(parse<ClaimRecord>(await this.store.get(key)))) {
          if ((await Promise.all(published.map((k) => this.store.head(k)))).some(Boolean)) await this.store.delete(staged);
        }
      }
      await this.store.delete(key);
    }
    return expired.length;
  }
}

/**
 * The staged manifests a claim names, each inside its version's directory and none a version's own manifest, with the
 * keys its version's manifest is published at (both namings where the claim does not say which the table uses).
 */
function stagedBy(claim: ClaimRecord | null): Array<{ staged: string; published: string[] }> {
  const shape = claim?.shape;
  if (!shape) return [];
  const named = [
    ...(shape.batch?.members ?? []).map((m) => ({ directory: m.directory, version: m.version, staged: m.staged, namings: [m.v2] })),
    ...(shape.version ? [{ directory: shape.directory, version: shape.version.number, staged: shape.version.staged, namings: [true, false] }] : []),
  ];
  return named
    .map(({ directory, version, staged, namings }) => ({ directory, staged, published: namings.map((v2) => manifestKey(directory, version, v2)) }))
    .filter(({ directory, staged, published }) => typeof staged === "string" && staged.startsWith(`${directory}/`) && !published.includes(staged))
    .map(({ staged, published }) => ({ staged, published }));
}

/** What a decision on a claimed attempt makes of the request: its answer (the version it made), or its key free again. */
function settledBy(decision: DecisionRecord, claim: ClaimRecord): Settled {
  return decision.landed ? { kind: "decided", decided: decision.landed, stopped: true, marker: claim.marker } : { kind: "free", next: claim.n + 1 };
}

/** The version a write's answer names: `version`, a number, or the version record CreateTableVersion answers. */
function versionIn(body: unknown): number | undefined {
  const version = (body as { version?: unknown } | undefined)?.version;
  if (typeof version === "number") return version;
  const inner = (version as { version?: unknown } | undefined)?.version;
  return typeof inner === "number" ? inner : undefined;
}
