/**
 * Grants: a role for a user, group or key on a namespace subtree or a table, one record each. A grant's id is a
 * digest of what it grants, so two instances granting the same thing at the same moment make one record.
 */
import "server-only";
import { createHash } from "node:crypto";
import type { ObjectStore } from "../storage/object-store";
import type { GrantRecord } from "./model";
import { RecordStore } from "./records";

type JournalEntry = { op: "add"; grant: GrantRecord } | { op: "remove"; id: string };

function grantId(input: Omit<GrantRecord, "id" | "createdAt">): string {
  const what = [input.principal.type, input.principal.name, input.role, input.scope.database ?? "", input.scope.kind, ...input.scope.id];
  return createHash("sha256").update(JSON.stringify(what)).digest("hex").slice(0, 16);
}

export class GrantStore {
  private readonly records: RecordStore<GrantRecord>;
  private migrated?: Promise<void>;

  /** `prefix` is the auth state's prefix in the store, ending with `/`. */
  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
  ) {
    this.records = new RecordStore(store, `${prefix}grants/`);
  }

  /**
   * Earlier versions kept grants as per-process journals (`grants/*.jsonl`, one `add` or `remove` per line). They
   * are replayed into records once and then deleted; replaying twice, from two instances, makes the same records.
   */
  private migrateJournals(): Promise<void> {
    this.migrated ??= (async () => {
      const journals = (await this.store.list(`${this.prefix}grants/`)).filter((k) => k.endsWith(".jsonl"));
      if (journals.length === 0) return;
      const added = new Map<string, GrantRecord>();
      const removed = new Set<string>();
      for (const key of journals) {
        const text = (await this.store.get(key))?.toString("utf8") ?? "";
        for (const line of text.split("\n")) {
          if (!line) continue;
          try {
            const entry = JSON.parse(line) as JournalEntry;
            if (entry.op === "add") added.set(entry.grant.id, entry.grant);
            else removed.add(entry.id);
          } catch {
            // a torn last line of a crashed process
          }
        }
      }
      // Keyed anew by what they grant, as grants made from now on are, so that making one again finds it.
      for (const grant of added.values()) if (!removed.has(grant.id)) await this.records.create({ ...grant, id: grantId(grant) });
      for (const key of journals) await this.store.delete(key);
    })();
    this.migrated.catch(() => (this.migrated = undefined));
    return this.migrated;
  }

  async list(): Promise<GrantRecord[]> {
    await this.migrateJournals();
    return this.records.list();
  }

  /** Makes a grant, or answers the one that grants the same already (its id is the digest of what it grants). */
  async create(input: Omit<GrantRecord, "id" | "createdAt">): Promise<GrantRecord> {
    await this.migrateJournals();
    const grant: GrantRecord = { ...input, id: grantId(input), createdAt: new Date().toISOString() };
    if (await this.records.create(grant)) return grant;
    return (await this.records.read(grant.id)) ?? grant;
  }

  async remove(id: string): Promise<boolean> {
    await this.migrateJournals();
    return this.records.remove(id);
  }
}
