/**
 * Group commit for appends. Appends to one table that arrive while a write to it is running wait for their turn
 * together and are committed as one version: a burst of small inserts from many clients then costs one Lance commit
 * (a manifest write, and a conflict check against every other writer) instead of one each.
 */
import "server-only";
import { joinIpcFiles, type ArrowBody } from "@/server/lance/arrow-ipc";
import { QuiverError } from "@/server/errors";
import type { WriteTicket } from "./write-ledger";

/** Bodies above this size are committed on their own: joining them would copy more than it saves. */
const JOINED_BODY_LIMIT = 8 * 1024 * 1024;
const GROUP_LIMIT = 64 * 1024 * 1024;

/** One append of a group: its body, its request's ticket in the write ledger, and why it was left out, if it was. */
export interface Appending {
  body: ArrowBody;
  ticket: WriteTicket | undefined;
  refused?: unknown;
}

interface Waiting extends Appending {
  resolve: (version: number) => void;
  reject: (err: unknown) => void;
}

/**
 * Commits a group as one version and answers it. It may leave members out (setting their `refused`) before it
 * commits; `file` joins the bodies of those it keeps.
 */
export type GroupCommit = (members: Appending[], file: () => Buffer) => Promise<number>;

/** Bodies can share one IPC file when their schemas are the same and no dictionary ids can clash. */
function joinKey(body: ArrowBody): string | null {
  if (body.dictionaries > 0 || body.file.length > JOINED_BODY_LIMIT) return null;
  return JSON.stringify([body.schema.fields.map((f) => [f.name, String(f.type), f.nullable, [...f.metadata]]), [...body.schema.metadata]]);
}

function groupsOf(batch: Waiting[]): Waiting[][] {
  const groups: Waiting[][] = [];
  const open = new Map<string, { group: Waiting[]; bytes: number }>();
  for (const waiting of batch) {
    const key = joinKey(waiting.body);
    const current = key === null ? undefined : open.get(key);
    if (key !== null && current && current.bytes + waiting.body.file.length <= GROUP_LIMIT) {
      current.group.push(waiting);
      current.bytes += waiting.body.file.length;
      continue;
    }
    const group = [waiting];
    groups.push(group);
    if (key !== null) open.set(key, { group, bytes: waiting.body.file.length });
  }
  return groups;
}

/** A refusal of the data itself: the engine committed nothing, and one body of a group may be all it refused. */
const refusedData = (err: unknown) => err instanceof QuiverError && (err.codeName === "InvalidInput" || err.codeName === "TableSchemaValidationError");

async function commitGroup(group: Waiting[], commit: GroupCommit): Promise<void> {
  const kept = () => group.filter((w) => w.refused === undefined);
  const file = () => {
    const bodies = kept().map((w) => w.body.file);
    return bodies.length === 1 ? bodies[0] : joinIpcFiles(bodies[0], bodies);
  };
  let failure: { err: unknown } | null = null;
  let version = 0;
  try {
    version = await commit(group, file);
  } catch (err) {
    failure = { err };
  }
  for (const w of group) if (w.refused !== undefined) w.reject(w.refused);
  const members = kept();
  if (!failure) return members.forEach((w) => w.resolve(version));
  // Only a refusal of the data is certain to have committed nothing: then each body answers for itself. Any other
  // failure (the store, a conflict) fails the group whole, its outcome left for the ledger to decide.
  if (members.length === 1 || !refusedData(failure.err)) return members.forEach((w) => w.reject(failure.err));
  for (const w of members) await commitGroup([w], commit);
}

export class AppendGroups {
  private readonly waiting = new Map<string, Waiting[]>();

  /**
   * Appends to the table `key` and answers the version that holds the body. `inTurn` runs a function in the table's
   * write turn; `commit` commits a group there.
   */
  append(key: string, appending: Appending, inTurn: (run: () => Promise<void>) => Promise<void>, commit: GroupCommit): Promise<number> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { ...appending, resolve, reject };
      const batch = this.waiting.get(key);
      if (batch) {
        batch.push(waiting);
        return;
      }
      const started = [waiting];
      this.waiting.set(key, started);
      inTurn(async () => {
        if (this.waiting.get(key) === started) this.waiting.delete(key);
        for (const group of groupsOf(started)) await commitGroup(group, commit);
      }).catch((err) => {
        // The turn failed before the batch was committed (the table is gone, say): every append in it fails so.
        if (this.waiting.get(key) === started) this.waiting.delete(key);
        started.forEach((w) => w.reject(err));
      });
    });
  }
}
