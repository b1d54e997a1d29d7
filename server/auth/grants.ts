/** Grants: a role for a user, group or key on a namespace subtree or a table. */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { RecordDirectory } from "./files";
import type { GrantRecord } from "./model";

export class GrantStore {
  private readonly records: RecordDirectory<GrantRecord>;

  constructor(authDir: string) {
    this.records = new RecordDirectory(path.join(authDir, "grants"));
  }

  list(): Promise<GrantRecord[]> {
    return this.records.list();
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
    const record: GrantRecord = { ...input, id: randomBytes(8).toString("hex"), createdAt: new Date().toISOString() };
    await this.records.write(record);
    return record;
  }

  remove(id: string): Promise<boolean> {
    return this.records.remove(id);
  }
}
