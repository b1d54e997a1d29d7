/**
 * Group commit for appends. Appends to one table that arrive while a write to it is running wait for their turn
 * together and are committed as one version: a burst of small inserts from many clients then costs one Lance commit
 * (a manifest write, and a conflict check against every other writer) instead of one each.
 */
import "server-only";
import { joinIpcFiles, type ArrowBody } from "@/server/lance/arrow-ipc";

/** Bodies above this size are committed on their own: joining them would copy more than it saves. */
const JOINED_BODY_LIMIT = 8 * 1024 * 1024;
const GROUP_LIMIT = 64 * 1024 * 1024;

interface Waiting {
  body: ArrowBody;
  resolve: (version: number) => void;
  reject: (err: unknown) => void;
}

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

async function commitOne(waiting: Waiting, append: (file: Buffer) => Promise<number>) {
  try {
    waiting.resolve(await append(waiting.body.file));
  } catch (err) {
    waiting.reject(err);
  }
}

async function commitGroups(batch: Waiting[], append: (file: Buffer) => Promise<number>) {
  for (const group of groupsOf(batch)) {
    if (group.length === 1) {
      await commitOne(group[0], append);
      continue;
    }
    try {
      const version = await append(
        joinIpcFiles(
          group[0].body.file,
          group.map((w) => w.body.file),
        ),
      );
      group.forEach((w) => w.resolve(version));
    } catch {
      // One body may be what the engine refused: each then answers for itself.
      for (const waiting of group) await commitOne(waiting, append);
    }
  }
}

export class AppendGroups {
  private readonly waiting = new Map<string, Waiting[]>();

  /**
   * Appends `body` to the table `key` and answers the version that holds it. `inTurn` runs a function in the
   * table's write turn; `append` commits one IPC file there and answers its version.
   */
  append(key: string, body: ArrowBody, inTurn: (run: () => Promise<void>) => Promise<void>, append: (file: Buffer) => Promise<number>): Promise<number> {
    return new Promise((resolve, reject) => {
      const waiting = { body, resolve, reject };
      const batch = this.waiting.get(key);
      if (batch) {
        batch.push(waiting);
        return;
      }
      const started = [waiting];
      this.waiting.set(key, started);
      inTurn(async () => {
        if (this.waiting.get(key) === started) this.waiting.delete(key);
        await commitGroups(started, append);
      }).catch((err) => {
        // The turn failed before the batch was committed (the table is gone, say): every append in it fails so.
        if (this.waiting.get(key) === started) this.waiting.delete(key);
        started.forEach((w) => w.reject(err));
      });
    });
  }
}
