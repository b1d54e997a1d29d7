/**
 * Write requests applied at most once, as the dispatcher runs them: the request's key (who, which table, which
 * request id) and what it asks, its handler run with its ticket in the write ledger (server/tables/write-ledger.ts),
 * an earlier attempt found at the commit settled and answered for, and how the attempt ended, recorded beside the
 * audit entry before the answer leaves.
 */
import "server-only";
import { createHash } from "node:crypto";
import { formatIdentifier } from "@/lib/identifiers";
import { QuiverError, invalidInput } from "../errors";
import { describePrincipal, type Principal } from "../auth/model";
import { currentWrite, EarlierAttempt, requestKey, sameBodyKey, WriteTicket, type Decided, type Settled, type WriteLedger } from "@/server/tables/write-ledger";
import { namedBranch } from "@/server/tables/branch-name";
import type { Reply, RouteContext, RouteDef } from "./route";
import { metrics } from "@/server/metrics";

/** JSON with its keys in order, so that a repeat sent with its fields in another order asks the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The request's digest of what it asks: operation, query and body (an Arrow body by its bytes' digest). */
export function fingerprintOf(operation: string, query: unknown, body: unknown, bodyDigest: string | null): string {
  const asked = bodyDigest ?? canonical(body);
  return createHash("sha256")
    .update(`${operation}\n${canonical(query)}\n${asked}`)
    .digest("hex");
}

/** The ticket of a request to a route that writes once, keyed by the caller's request id. */
export function writeTicket(
  route: RouteDef,
  request: {
    principal: Principal;
    database: string;
    path: string;
    id: string[];
    requestId: string;
    query: unknown;
    body: unknown;
    bodyDigest: string | null;
    rows: number | null;
    /** Named by an Idempotency-Key: its client keeps the key across its retries, so its body need not tell them. */
    keyed: boolean;
  },
): WriteTicket {
  const { principal, database, path, id, requestId, query, body, bodyDigest, rows, keyed } = request;
  const who = `${principal.kind}:${principal.id}`;
  const target = route.once!.scope === "batch" ? "batch" : formatIdentifier(id);
  const fingerprint = fingerprintOf(route.operationId, query, body, bodyDigest);
  const branch = (body as { branch?: string | null } | undefined)?.branch ?? (query as { branch?: string }).branch;
  return new WriteTicket({
    key: requestKey(who, database, target, requestId),
    requestId,
    fingerprint,
    sameBody: route.once!.sameBody && !keyed ? sameBodyKey(who, database, target, fingerprint) : null,
    answeredByVersion: route.once!.answeredByVersion === true,
    operation: route.operationId,
    rows,
    branch: namedBranch(branch),
    principal: describePrincipal(principal),
    database,
    path,
  });
}

function decidedAnswer(route: RouteDef, decided: Decided, ctx: RouteContext<unknown, unknown>): Promise<Reply> {
  if (!route.once?.decided) throw new QuiverError("Internal", `${route.operationId} cannot be answered from a table's history`);
  return route.once.decided(decided, ctx);
}

const inProgress = (what: string) =>
  new QuiverError("ConcurrentModification", `${what} is still being applied by an earlier attempt; ask again (with the same request id) for its answer`);

/**
 * Runs the handler with the request's ticket; when its commit finds an earlier attempt of the request (or of the same
 * body), settles that one and answers for it: its answer, or the one the table's history gives for an attempt whose
 * instance stopped after committing. Sets `ticket.replayed` when the answer is an earlier attempt's.
 */
export async function runOnce(route: RouteDef, ctx: RouteContext<unknown, unknown>, ticket: WriteTicket, ledger: WriteLedger): Promise<Reply> {
  const { requestId, key, fingerprint } = ticket.request;
  /** The earlier attempt's answer, when it was applied. */
  const counted = (outcome: string) => metrics.repeats.inc({ operation: route.operationId, outcome });
  const replay = (settled: Settled): Promise<Reply> | null => {
    // The earlier attempt's marker among writes of its body goes once this answer is out: it is answered for now.
    if (settled.kind === "committed" || settled.kind === "decided") ticket.marker = settled.marker ?? null;
    if (settled.kind === "committed") {
      counted("replayed");
      ticket.replayed = `request ${requestId} was applied by an earlier attempt; this is its answer`;
      return Promise.resolve({ kind: "json", body: settled.body, status: settled.status });
    }
    if (settled.kind === "decided") {
      counted(settled.stopped ? "decided" : "replayed");
      ticket.replayed = settled.stopped
        ? `request ${requestId} was applied by an earlier attempt that stopped before answering (version ${settled.decided.version})`
        : `request ${requestId} was applied by an earlier attempt, at version ${settled.decided.version}; this is its answer`;
      return decidedAnswer(route, settled.decided, ctx);
    }
    return null;
  };
  for (;;) {
    try {
      return await currentWrite.run(ticket, () => route.handler(ctx));
    } catch (err) {
      if (!(err instanceof EarlierAttempt)) {
        // Refused before its commit: a repeat of a request that was applied may be refused by what it did (a staged
        // manifest it published is gone, a table it declared exists). Then the first's answer is the answer.
        if (!(err instanceof QuiverError) || err.status >= 500 || ticket.claimed || ticket.attempt > 1) throw err;
        const settled = await ledger.settle(key, fingerprint, ticket);
        const replayed = replay(settled);
        if (replayed) return replayed;
        // A batch of versions an earlier attempt stopped in: this attempt's checks, run again, take what it published.
        if (settled.kind === "free" && ticket.resumes) {
          ticket.attempt = settled.next;
          continue;
        }
        throw err;
      }
      if (!err.sameBody) {
        const settled = await ledger.settle(key, fingerprint, ticket);
        switch (settled.kind) {
          case "committed":
          case "decided":
            return replay(settled)!;
          case "free":
            ticket.attempt = settled.next;
            continue;
          case "running":
            counted("in_progress");
            throw inProgress(`request ${requestId}`);
          case "undecidable":
            counted("undecidable");
            throw new QuiverError(
              "ConcurrentModification",
              `an earlier attempt of request ${requestId} stopped, and whether it was applied cannot be told: ${settled.reason}`,
            );
          case "different-request":
            counted("refused");
            throw invalidInput(
              `request id ${requestId} was used for another request to this table: a retry must send the same operation, query and body, and a new write a new request id`,
            );
        }
      }
      for (const { key: other, marker } of err.earlier) {
        const settled = await ledger.settleSameBody(other, marker!, ticket);
        if (settled.kind === "another") {
          ticket.notThisOne.add(other);
          continue;
        }
        if (settled.kind === "running") {
          counted("in_progress");
          throw inProgress("a write of the same body by the same caller");
        }
        if (settled.kind === "undecidable") {
          counted("undecidable");
          throw new QuiverError(
            "ConcurrentModification",
            `an earlier write of the same body stopped, and whether it was applied cannot be told: ${settled.reason}. Look at the table before sending it again`,
          );
        }
        if (settled.kind !== "committed" && settled.kind !== "decided")
          throw new QuiverError("Internal", `an earlier write of the same body settled as ${settled.kind}`);
        // The earlier write committed and its answer never reached its client: this is its retry.
        const adopted = await replay(settled)!;
        // As the listing named it: a claim of an earlier release does not name its marker.
        ticket.marker = marker!;
        await ledger.adopt(ticket, { status: 200, body: (adopted as { body: unknown }).body });
        ticket.replayed = `the same rows were written by an earlier request whose answer never reached its client; this is its answer`;
        return adopted;
      }
    }
  }
}

/** An answer as a repeat is given it: credentials a declare vended are not kept, nor handed out again unaudited. */
function withoutCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCredentials);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, k === "storage_options" && v && typeof v === "object" ? {} : withoutCredentials(v)]),
  );
}

/** The outcome of an attempt as its answer record says it, from how the request ended. */
export function ending(ticket: WriteTicket, result: Reply | null, err: unknown) {
  if (result && result.kind === "json") return { outcome: "committed" as const, status: result.status ?? 200, body: withoutCredentials(result.body) };
  // A failure before the commit began committed nothing; one after it, unless it refused the request itself, may
  // have left it landed: the history says.
  const refused = err instanceof QuiverError && err.status < 500;
  if (!ticket.commitStarted || (refused && !ticket.landed)) return { outcome: "not-committed" as const };
  return { outcome: "undecided" as const };
}
