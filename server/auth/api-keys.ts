/**
 * API keys: `qvr_<id>_<secret>`. Only a SHA-256 digest of the whole key is kept (keys are 256-bit random, so a
 * slow hash adds nothing); the key itself is shown once, when it is created.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import path from "node:path";
import { RecordDirectory } from "./files";
import type { ApiKeyRecord, Role, Scope } from "./model";

const KEY_PATTERN = /^qvr_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const LAST_USED_RESOLUTION_MS = 60_000;

export const looksLikeApiKey = (value: string) => value.startsWith("qvr_");

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export class ApiKeyStore {
  private readonly records: RecordDirectory<ApiKeyRecord>;

  constructor(authDir: string) {
    this.records = new RecordDirectory(path.join(authDir, "keys"));
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.records.list();
  }

  async create(input: { name: string; role: Role; scope: Scope; expiresAt: string | null; createdBy: string }): Promise<{ key: string; record: ApiKeyRecord }> {
    const id = randomBytes(8).toString("hex");
    const key = `qvr_${id}_${randomBytes(32).toString("base64url")}`;
    const record: ApiKeyRecord = {
      id,
      name: input.name,
      role: input.role,
      scope: input.scope,
      hash: digest(key).toString("hex"),
      createdAt: new Date().toISOString(),
      createdBy: input.createdBy,
      expiresAt: input.expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.records.write(record);
    return { key, record };
  }

  async revoke(id: string): Promise<ApiKeyRecord | null> {
    const record = await this.records.read(id);
    if (!record) return null;
    if (!record.revokedAt) {
      record.revokedAt = new Date().toISOString();
      await this.records.write(record);
    }
    return record;
  }

  /** The live record for a presented key, or a reason it is refused. */
  async verify(key: string): Promise<{ record: ApiKeyRecord } | { refused: string }> {
    const match = KEY_PATTERN.exec(key);
    if (!match) return { refused: "the API key is malformed" };
    const record = await this.records.read(match[1]);
    const presented = digest(key);
    if (!record || !timingSafeEqual(presented, Buffer.from(record.hash, "hex"))) return { refused: "the API key is not valid" };
    if (record.revokedAt) return { refused: "the API key has been revoked" };
    if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now()) return { refused: "the API key has expired" };
    if (!record.lastUsedAt || Date.now() - Date.parse(record.lastUsedAt) > LAST_USED_RESOLUTION_MS) {
      record.lastUsedAt = new Date().toISOString();
      await this.records.write(record).catch(() => undefined);
    }
    return { record };
  }

  read(id: string) {
    return this.records.read(id);
  }
}

export function publicKey(record: ApiKeyRecord) {
  // The digest stays on the server: nothing derived from the key leaves it.
  const { hash: _hash, ...rest } = record;
  return rest;
}
