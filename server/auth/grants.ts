/**
 * Grants: a role for a user, group or key on a namespace subtree or a table. Kept as journals under the data
 * root: each process appends `add` and `remove` entries to a file of its own, and every process replays all the
 * files, reading only what was appended since it last looked. Grant ids are never reused, so the order in which
 * journals are replayed does not matter.
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { GrantRecord } from "./model";
import { KeyedLock } from "../keyed-lock";

type JournalEntry = { op: "add"; grant: GrantRecord } | { op: "remove"; id: string };

export class GrantStore {
  private readonly dir: string;
  private readonly file: string;
  private readonly offsets = new Map<string, number>();
  private readonly added = new Map<string, GrantRecord>();
  private readonly removed = new Set<string>();
  private readonly lock = new KeyedLock();

  constructor(authDir: string) {
    this.dir = path.join(authDir, "grants");
    this.file = path.join(this.dir, `${process.pid}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}.jsonl`);
  }

  /** Reads what every journal gained since the last look. */
  private refresh(): Promise<void> {
    return this.lock.run("refresh", async () => {
      await fs.mkdir(this.dir, { recursive: true });
      for (const name of await fs.readdir(this.dir)) {
        if (!name.endsWith(".jsonl")) continue;
        const file = path.join(this.dir, name);
        const from = this.offsets.get(name) ?? 0;
        const { size } = await fs.stat(file);
        if (size <= from) continue;
        const handle = await fs.open(file, "r");
        try {
          const buf = Buffer.alloc(size - from);
          await handle.read(buf, 0, buf.length, from);
          const text = buf.toString("utf8");
          const complete = text.lastIndexOf("\n") + 1;
          for (const line of text.slice(0, complete).split("\n")) if (line) this.apply(JSON.parse(line) as JournalEntry);
          this.offsets.set(name, from + Buffer.byteLength(text.slice(0, complete)));
        } finally {
          await handle.close();
        }
      }
    });
  }

  private apply(entry: JournalEntry) {
    if (entry.op === "add") this.added.set(entry.grant.id, entry.grant);
    else this.removed.add(entry.id);
  }

  private async append(entry: JournalEntry) {
    await fs.mkdir(this.dir, { recursive: true });
    await fs.appendFile(this.file, JSON.stringify(entry) + "\n", { mode: 0o600 });
    await this.refresh();
  }

  async list(): Promise<GrantRecord[]> {
    await this.refresh();
    return [...this.added.values()].filter((g) => !this.removed.has(g.id));
  }

  async create(input: Omit<GrantRecord, "id" | "createdAt">): Promise<GrantRecord> {
    const existing = (await this.list()).find(
      (g) =>
        g.principal.type === input.principal.type &&
        g.principal.name === input.principal.name &&
        g.role === input.role &&
        g.scope.database === input.scope.database &&
        g.scope.kind === input.scope.kind &&
        g.scope.id.join("\u0000") === input.scope.id.join("\u0000"),
    );
    if (existing) return existing;
    const grant: GrantRecord = { ...input, id: randomBytes(8).toString("hex"), createdAt: new Date().toISOString() };
    await this.append({ op: "add", grant });
    return grant;
  }

  async remove(id: string): Promise<boolean> {
    await this.refresh();
    if (!this.added.has(id) || this.removed.has(id)) return false;
    await this.append({ op: "remove", id });
    return true;
  }
}
