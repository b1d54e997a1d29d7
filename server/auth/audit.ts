/**
 * The audit log: one JSON line per mutating call and per refused call, appended to a file of this process under
 * the data root (several processes never share a file), read back merged, filtered and paged.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import type { AuditEntry } from "@/lib/audit-entry";

export type { AuditEntry };

export interface AuditFilter {
  principal?: string;
  action?: string;
  outcome?: string;
  target?: string;
  database?: string;
}

export class AuditLog {
  private readonly file: string;
  private ready?: Promise<void>;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly dir: string) {
    this.file = path.join(dir, `${new Date().toISOString().slice(0, 10)}-${process.pid}-${Date.now().toString(36)}.jsonl`);
  }

  record(entry: AuditEntry): Promise<void> {
    this.ready ??= fs.mkdir(this.dir, { recursive: true }).then(() => undefined);
    const line = JSON.stringify(entry) + "\n";
    this.queue = this.queue.then(() => this.ready!).then(() => fs.appendFile(this.file, line, { mode: 0o600 }));
    return this.queue;
  }

  /** Newest first; `before` pages by the position (time and request id) of the last entry seen. */
  async query(filter: AuditFilter, limit: number, before?: string): Promise<{ entries: AuditEntry[]; next?: string }> {
    await this.queue.catch(() => undefined);
    let names: string[] = [];
    try {
      names = (await fs.readdir(this.dir)).filter((n) => n.endsWith(".jsonl"));
    } catch {
      return { entries: [] };
    }
    const entries: AuditEntry[] = [];
    for (const name of names) {
      const text = await fs.readFile(path.join(this.dir, name), "utf8");
      for (const line of text.split("\n")) {
        if (!line) continue;
        try {
          entries.push(JSON.parse(line));
        } catch {
          // a torn last line of a crashed process is skipped
        }
      }
    }
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
