/**
 * Manifests the engine stages for Quiver to publish, kept in memory instead of in the store. Through the engine's
 * commit connection every commit is published by Quiver (server/lance/engine-versions.ts): the engine writes its
 * manifest beside the table's versions under a name of its own (`<version>.manifest-<uuid>`), and Quiver reads it and
 * writes the version's manifest. In the store that is three requests the engine's own commit does not make (the
 * staged write, its read, its removal); kept here, the staged file costs none, and the version's manifest is the one
 * write the engine itself would have made. The name holds a random uuid, so it names one staging wherever it is.
 * A staged manifest nobody takes (its commit failed, its instance stopped) is forgotten after a while; past the
 * memory bound, the store keeps them as before. Erasable TypeScript (see disk-cache.ts).
 */

/** `<version>.manifest-<uuid>` in a `_versions/` directory: what Lance names a staged manifest. */
const STAGED = /\/_versions\/\d+\.manifest-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const MAX_BYTES = 64 * 2 ** 20;
const KEPT_MS = 10 * 60_000;

/** The staged manifest's name, when `object` (a path as the store names it) is one, outside Quiver's records. */
export function stagedManifestName(object: string): string | null {
  return STAGED.test(object) && !object.includes("/.quiver/") ? object.slice(object.lastIndexOf("/") + 1) : null;
}

export class StagedManifests {
  private readonly kept = new Map<string, { body: Buffer; etag: string; at: number }>();
  private bytes = 0;

  /** Whether a staged manifest of `length` bytes would be kept. */
  fits(length: number): boolean {
    this.forgetOld();
    return this.bytes + length <= MAX_BYTES;
  }

  /** Keeps a staged manifest and answers its etag; null when it does not fit (the store keeps it then). */
  keep(name: string, body: Buffer): string | null {
    this.forgetOld();
    if (this.bytes + body.length > MAX_BYTES) return null;
    this.drop(name);
    const etag = `"${name.slice(name.indexOf("-") + 1)}"`;
    this.kept.set(name, { body, etag, at: Date.now() });
    this.bytes += body.length;
    return etag;
  }

  get(name: string): { body: Buffer; etag: string } | undefined {
    return this.kept.get(name);
  }

  /** The staged manifest, given up: its commit takes it. */
  take(name: string): Buffer | null {
    const found = this.kept.get(name);
    if (!found) return null;
    this.drop(name);
    return found.body;
  }

  drop(name: string): boolean {
    const found = this.kept.get(name);
    if (!found) return false;
    this.kept.delete(name);
    this.bytes -= found.body.length;
    return true;
  }

  private forgetOld() {
    const oldest = Date.now() - KEPT_MS;
    for (const [name, { at }] of this.kept) {
      if (at >= oldest) break;
      this.drop(name);
    }
  }
}
