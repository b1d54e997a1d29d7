/**
 * The audit log: one JSON line per mutating call and per refused call. Object stores cannot append, so each
 * instance writes segments: entries recorded while a segment is being written go together into the next one.
 * Segments never change once written, so a reader caches each one it has read. Read back merged, filtered, paged.
 */
import "server-only";
import { randomBytes } from "node:crypto";
import type { AuditEntry } from "@/lib/contract/access";
import type { ObjectStore } from "../storage/object-store";

export type { AuditEntry };

export interface AuditFilter {
  principal?: string;
  action?: string;
  outcome?: string;
  target?: string;
  database?: string;
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AuditLog {
  private readonly instance = randomBytes(6).toString("hex");
  private sequence = 0;
  private pending: Pending[] = [];
  private writing?: Promise<void>;
  private readonly segments = new Map<string, AuditEntry[]>();
  private lastRecorded: Promise<void> = Promise.resolve();

  /** `prefix` ends with `/`. */
  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
  ) {}

  /** Resolves when the entries are stored, together. */
  record(...entries: AuditEntry[]): Promise<void> {
    this.lastRecorded = new Promise((resolve, reject) => {
      this.pending.push({ line: entries.map((entry) => JSON.stringify(entry) + "\n").join(""), resolve, reject });
      this.flush();
    });
    return this.lastRecorded;
  }

  private flush() {
    if (this.writing || this.pending.length === 0) return;
    const group = this.pending.splice(0, this.pending.length);
    const now = new Date();
    // Named by time first, so that a listing is in time order; the instance and a sequence keep names unique.
    const name = `${now.toISOString().slice(0, 10)}/${now.toISOString().replace(/[-:.]/g, "")}-${this.instance}-${String(this.sequence++).padStart(8, "0")}.jsonl`;
    this.writing = this.store
      .put(this.prefix + name, group.map((p) => p.line).join(""))
      .then(
        () => group.forEach((p) => p.resolve()),
        (err) => group.forEach((p) => p.reject(err)),
      )
      .finally(() => {
        this.writing = undefined;
        this.flush();
      });
  }

  private async segment(key: string): Promise<AuditEntry[]> {
    const cached = this.segments.get(key);
    if (cached) return cached;
    const entries: AuditEntry[] = [];
    for (const line of ((await this.store.get(key))?.toString("utf8") ?? "").split("\n")) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line));
      } catch {
        // a torn last line of a crashed process (in the appended files of earlier versions)
      }
    }
    // This version's segments never change; files of earlier versions were appended to by their process only.
    if (/\/\d{8}T\d{9}Z-[0-9a-f]{12}-\d{8}\.jsonl$/.test(key)) this.segments.set(key, entries);
    return entries;
  }

  /** Newest first; `before` pages by the position (time and request id) of the last entry seen. */
  async query(filter: AuditFilter, limit: number, before?: string): Promise<{ entries: AuditEntry[]; next?: string }> {
    // What this instance recorded before the query is part of its answer.
    await this.lastRecorded.catch(() => undefined);
    const keys = (await this.store.list(this.prefix)).filter((k) => k.endsWith(".jsonl"));
    const entries: AuditEntry[] = [];
    for (const key of keys) entries.push(...(await this.segment(key)));
    const position = (e: AuditEntry) => `${e.time}|${e.requestId}`;
    const matches = (e: AuditEntry) =>
      (!filter.principal || e.principal?.name === filter.principal || e.principal?.id === filter.principal) &&
      (!filter.action || e.action === filter.action) &&
      (!filter.outcome || e.outcome === filter.outcome) &&
      (!filter.database || e.database === filter.database) &&
      (!filter.target || (e.target ?? "").startsWith(filter.target)) &&
      (!before || position(e) < before);
    const sorted = entries.filter(matches).sort((a, b) => (position(a) < position(b) ? 1 : -1));
    const page = sorted.slice(0, limit);
    return { entries: page, next: sorted.length > limit ? position(page[page.length - 1]) : undefined };
  }
}
