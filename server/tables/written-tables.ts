/**
 * Which tables this process committed to lately, told to the maintainer through the store: the tables written since
 * a maintenance pass are the ones it looks at, instead of every table of the root. Noted in memory as commits land,
 * and written every few seconds while there are any, as one small object per flush
 * (`.quiver/written/<time>-<instance>.json`, the locations). The maintainer reads what is there and deletes what it
 * has read once its pass is done; at rest nothing is written. A note lost with its process (killed before its flush)
 * leaves the table to the maintainer's slow sweep of every table.
 */
import "server-only";
import { INSTANCE } from "@/server/instance";
import { log } from "@/server/log";
import type { ObjectStore } from "@/server/storage/object-store";

const PREFIX = ".quiver/written/";
const FLUSH_MS = 2_000;

export class WrittenTables {
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushes = 0;

  constructor(private readonly store: ObjectStore) {}

  /** Notes a commit to the table at `location`. */
  note(location: string): void {
    this.pending.add(location);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  /** Writes what was noted since the last flush. */
  async flush(): Promise<void> {
    this.timer = null;
    const locations = [...this.pending];
    if (locations.length === 0) return;
    this.pending = new Set();
    const key = `${PREFIX}${String(Date.now()).padStart(14, "0")}-${INSTANCE}-${this.flushes++}.json`;
    try {
      await this.store.put(key, JSON.stringify(locations));
    } catch (err) {
      log.warn({ err }, "noting the tables this instance wrote failed; the next flush tries again");
      for (const location of locations) this.note(location);
    }
  }

  /** The tables every instance noted as written, and the notes that say so (to forget once they are dealt with). */
  static async read(store: ObjectStore): Promise<{ locations: Set<string>; notes: string[] }> {
    const notes = await store.list(PREFIX);
    const locations = new Set<string>();
    await Promise.all(
      notes.map(async (key) => {
        const body = await store.get(key);
        try {
          for (const location of JSON.parse(body?.toString("utf8") ?? "[]") as string[]) locations.add(location);
        } catch {
          // a note not of this service's writing names nothing
        }
      }),
    );
    return { locations, notes };
  }

  static async forget(store: ObjectStore, notes: string[]): Promise<void> {
    await Promise.all(notes.map((key) => store.delete(key)));
  }
}
