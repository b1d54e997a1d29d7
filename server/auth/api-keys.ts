/**
 * API keys: `qvr_<id>_<secret>`. Only a SHA-256 digest of the whole key is kept (keys are 256-bit random, so a
 * slow hash adds nothing); the key itself is shown once, when it is created.
 */
import "server-only";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ObjectStore } from "../storage/object-store";
import { RecordStore } from "./records";
import type { ApiKeyRecord, KeyRole, Scope } from "./model";

const KEY_PATTERN = /^qvr_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const LAST_USED_RESOLUTION_MS = 60_000;

export const looksLikeApiKey = (value: string) => value.startsWith("qvr_");

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Key records never change once written. Revoking a key writes a `<id>.revoked` object beside its record (only
 * where none exists, so the first revocation's time stays), and use writes `<id>.used` with the time (the last
 * writer wins, which is all "last used" asks): no instance can undo another's revocation by writing a stale copy.
 */
export class ApiKeyStore {
  private readonly records: RecordStore<ApiKeyRecord>;
  /** Records are immutable, so each is read from the store once per process. */
  private readonly known = new Map<string, ApiKeyRecord>();
  /** When this process last wrote each key's use, so that it writes at most once a minute per key. */
  private readonly usedWritten = new Map<string, number>();
  private readonly prefix: string;

  /** `prefix` is the auth state's prefix in the store, ending with `/`. */
  constructor(
    private readonly store: ObjectStore,
    prefix: string,
  ) {
    this.prefix = `${prefix}keys/`;
    this.records = new RecordStore(store, this.prefix);
  }

  private fact(id: string, fact: "revoked" | "used") {
    return `${this.prefix}${id}.${fact}`;
  }

  private async readFact(id: string, fact: "revoked" | "used"): Promise<string | null> {
    return (await this.store.get(this.fact(id, fact)))?.toString("utf8") ?? null;
  }

  /** Every key with its revocation and last use (of earlier versions' records too, which held both inline). */
  async list(): Promise<ApiKeyRecord[]> {
    const records = await this.records.list();
    return Promise.all(
      records.map(async (record) => {
        const [revokedAt, lastUsedAt] = await Promise.all([this.readFact(record.id, "revoked"), this.readFact(record.id, "used")]);
        return { ...record, revokedAt: record.revokedAt ?? revokedAt, lastUsedAt: latest(record.lastUsedAt, lastUsedAt) };
      }),
    );
  }

  async create(input: {
    name: string;
    role: KeyRole;
    scope: Scope;
    expiresAt: string | null;
    createdBy: string;
  }): Promise<{ key: string; record: ApiKeyRecord }> {
    for (;;) {
      const created = await this.createWithNewId(input);
      if (created) return created;
    }
  }

  /** Null in the (2^-64) case that the random id is taken. */
  private async createWithNewId(input: { name: string; role: KeyRole; scope: Scope; expiresAt: string | null; createdBy: string }) {
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
    return (await this.records.create(record)) ? { key, record } : null;
  }

  async revoke(id: string): Promise<ApiKeyRecord | null> {
    const record = await this.read(id);
    if (!record) return null;
    if (record.revokedAt) return record;
    await this.store.putIfAbsent(this.fact(id, "revoked"), new Date().toISOString());
    await this.records.touch();
    return { ...record, revokedAt: await this.readFact(id, "revoked") };
  }

  /** A key's record, revoked or not. */
  async read(id: string): Promise<ApiKeyRecord | null> {
    let record = this.known.get(id);
    if (!record) {
      record = (await this.records.read(id)) ?? undefined;
      if (!record) return null;
      this.known.set(id, record);
    }
    return { ...record, revokedAt: record.revokedAt ?? (await this.readFact(id, "revoked")) };
  }

  /** The live record for a presented key, or a reason it is refused. */
  async verify(key: string): Promise<{ record: ApiKeyRecord } | { refused: string }> {
    const match = KEY_PATTERN.exec(key);
    if (!match) return { refused: "the API key is malformed" };
    const record = await this.read(match[1]);
    const presented = digest(key);
    if (!record || !timingSafeEqual(presented, Buffer.from(record.hash, "hex"))) return { refused: "the API key is not valid" };
    if (record.revokedAt) return { refused: "the API key has been revoked" };
    if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now()) return { refused: "the API key has expired" };
    if (Date.now() - (this.usedWritten.get(record.id) ?? 0) > LAST_USED_RESOLUTION_MS) {
      this.usedWritten.set(record.id, Date.now());
      const now = new Date().toISOString();
      await this.store.put(this.fact(record.id, "used"), now).then(
        () => this.records.touch(),
        () => undefined,
      );
    }
    return { record };
  }
}

function latest(a: string | null, b: string | null): string | null {
  if (!a || !b) return a ?? b;
  return a > b ? a : b;
}

export function publicKey(record: ApiKeyRecord) {
  // The digest stays on the server: nothing derived from the key leaves it.
  const { hash: _hash, ...rest } = record;
  return rest;
}
