/**
 * Authentication and authorization: turns presented credentials into a principal, and answers what role a
 * principal holds on a namespace or table of a database.
 */
import "server-only";
import type { ObjectStore } from "../storage/object-store";
import { rootStore } from "../storage/stores";
import { ApiKeyStore, looksLikeApiKey, sameSecret } from "./api-keys";
import { AuditLog } from "./audit";
import { GrantStore } from "./grants";
import { covers, maxRole, reachesInto, roleRank, type GrantRecord, type Principal, type Role, type Scope } from "./model";
import { oidcConfigFromEnv, TokenVerifier, type TokenSubject } from "./tokens";
import { joinIdentifier, sameIdentifier } from "@/lib/identifiers";

export type Authenticated = { principal: Principal } | { refused: string };

export class Access {
  readonly keys: ApiKeyStore;
  readonly grants: GrantStore;
  readonly audit: AuditLog;
  readonly tokens: TokenVerifier | null;
  private readonly admins: Set<string>;

  /** `prefix` is where the auth state lives in the store, ending with `/`. */
  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
  ) {
    this.keys = new ApiKeyStore(store, prefix);
    this.grants = new GrantStore(store, prefix);
    this.audit = new AuditLog(store, `${prefix}audit/`);
    const oidc = oidcConfigFromEnv();
    this.tokens = oidc ? new TokenVerifier(oidc) : null;
    this.admins = new Set(
      (process.env.QUIVER_ADMINS ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    );
  }

  /**
   * With no admin key configured and no key issued yet, creates the first admin key and returns it, once, to
   * be printed. A lock object written only where none exists keeps two instances starting together from both
   * doing it.
   */
  async bootstrap(): Promise<string | null> {
    if (process.env.QUIVER_ADMIN_API_KEY) return null;
    if ((await this.keys.list()).length > 0) return null;
    if (!(await this.store.putIfAbsent(`${this.prefix}bootstrap.lock`, new Date().toISOString()))) return null;
    const { key } = await this.keys.create({
      name: "bootstrap admin",
      role: "admin",
      scope: { database: null, kind: "namespace", id: [] },
      expiresAt: null,
      createdBy: "bootstrap",
    });
    return key;
  }

  async authenticateKey(key: string): Promise<Authenticated> {
    const envKey = process.env.QUIVER_ADMIN_API_KEY;
    if (envKey && sameSecret(key, envKey)) return { principal: { kind: "key", id: "admin", name: "QUIVER_ADMIN_API_KEY", key: null, admin: true } };
    const verified = await this.keys.verify(key);
    if ("refused" in verified) return verified;
    const { record } = verified;
    return { principal: { kind: "key", id: record.id, name: record.name, key: record, admin: false } };
  }

  /**
   * A bearer credential: any key `x-api-key` takes (the configured admin key, which may look like anything, or an
   * issued `qvr_` key), else an OAuth access token.
   */
  async authenticateBearer(token: string): Promise<Authenticated> {
    const envKey = process.env.QUIVER_ADMIN_API_KEY;
    if (looksLikeApiKey(token) || (envKey && sameSecret(token, envKey))) return this.authenticateKey(token);
    return this.authenticateToken(token);
  }

  private async authenticateToken(token: string): Promise<Authenticated> {
    if (!this.tokens) return { refused: "bearer tokens are not accepted: no OpenID provider is configured" };
    const subject = await this.tokens.verify(token);
    if ("refused" in subject) return subject;
    return { principal: this.userPrincipal(subject) };
  }

  userPrincipal(subject: TokenSubject): Principal {
    const admin =
      this.admins.has(subject.sub) ||
      (subject.email !== undefined && this.admins.has(subject.email)) ||
      subject.groups.some((g) => this.admins.has(`group:${g}`));
    return { kind: "user", id: subject.sub, name: subject.email ?? subject.sub, email: subject.email, groups: subject.groups, admin };
  }

  /** The grants that apply to a principal, whatever their scope. */
  async grantsOf(p: Principal): Promise<GrantRecord[]> {
    const all = await this.grants.list();
    return all.filter((g) => {
      if (p.kind === "key") return g.principal.type === "key" && g.principal.name === p.id;
      if (g.principal.type === "user") return g.principal.name === p.id || g.principal.name === p.email;
      return g.principal.type === "group" && p.groups.includes(g.principal.name);
    });
  }

  /** Scopes in which a principal holds some role: its key's scope and its grants. */
  private async scopesOf(p: Principal): Promise<Array<{ scope: Scope; role: Role }>> {
    const grants = (await this.grantsOf(p)).map((g) => ({ scope: g.scope, role: g.role }));
    if (p.kind === "key" && p.key) {
      // A metrics key reads the metrics and nothing of the catalog, whatever it has been granted.
      if (p.key.role === "metrics") return [];
      const keyScope = p.key.scope;
      // A key acts only inside its own scope, whatever it has been granted.
      return [{ scope: keyScope, role: p.key.role }, ...grants.filter((g) => withinScope(g.scope, keyScope))];
    }
    return grants;
  }

  async roleOn(p: Principal, database: string, target: string[]): Promise<Role | null> {
    if (p.admin) return "admin";
    if (p.kind === "key" && p.key && !covers(p.key.scope, database, target)) return null;
    let role: Role | null = null;
    for (const s of await this.scopesOf(p)) if (covers(s.scope, database, target)) role = maxRole(role, s.role);
    return role;
  }

  /** Whether the principal holds `need` on anything of the database (a batch's tables are then checked one by one). */
  async holdsAnywhere(p: Principal, database: string, need: Role): Promise<boolean> {
    if (p.admin) return true;
    return (await this.scopesOf(p)).some((s) => (s.scope.database === null || s.scope.database === database) && roleRank(s.role) >= roleRank(need));
  }

  /** A namespace is shown to those who may read it or hold anything inside it. */
  async canSeeNamespace(p: Principal, database: string, namespace: string[]): Promise<boolean> {
    if (p.admin) return true;
    for (const s of await this.scopesOf(p)) if (covers(s.scope, database, namespace) || reachesInto(s.scope, database, namespace)) return true;
    return false;
  }

  /** Who may scrape GET /metrics: an administrator of the whole service, or a key with the metrics role. */
  async canReadMetrics(p: Principal): Promise<boolean> {
    return (p.kind === "key" && p.key?.role === "metrics") || this.isGlobalAdmin(p);
  }

  async isGlobalAdmin(p: Principal): Promise<boolean> {
    if (p.admin) return true;
    return (await this.scopesOf(p)).some((s) => s.role === "admin" && s.scope.database === null && s.scope.kind === "namespace" && s.scope.id.length === 0);
  }

  /**
   * Declaring a table sets up its access control: the declaring principal becomes admin of the table. One that is
   * admin of it by what it is (a service administrator, or an admin key whose own scope holds the table) needs no
   * grant, which no one could revoke apart from that standing anyway: a declare then writes nothing more.
   */
  async grantDeclarer(p: Principal, database: string, table: string[]): Promise<void> {
    if (p.admin || (p.kind === "key" && p.key?.role === "admin" && covers(p.key.scope, database, table))) return;
    await this.grants.create({
      principal: { type: p.kind === "key" ? "key" : "user", name: p.id },
      role: "admin",
      scope: { database, kind: "table", id: table },
      createdBy: `${p.kind}:${p.name}`,
    });
  }

  /** A dropped table's own grants go with it, so a later table of the same name starts with none. */
  async forgetTable(database: string, table: string[]): Promise<void> {
    for (const g of await this.grants.list()) {
      if (g.scope.kind === "table" && g.scope.database === database && sameIdentifier(g.scope.id, table)) await this.grants.remove(g.id);
    }
  }

  /**
   * A dropped namespace's grants go with it, and those of every namespace and table it held, so a later namespace or
   * table of the same name starts with none.
   */
  async forgetNamespace(database: string, namespace: string[]): Promise<void> {
    for (const g of await this.grants.list()) {
      if (g.scope.database === database && g.scope.id.length >= namespace.length && sameIdentifier(g.scope.id.slice(0, namespace.length), namespace)) {
        await this.grants.remove(g.id);
      }
    }
  }

  /** A renamed or moved table keeps its own grants under its new name, and none is left under the old one. */
  async moveTable(database: string, from: string[], to: string[]): Promise<void> {
    for (const g of await this.grants.list()) {
      if (g.scope.kind !== "table" || g.scope.database !== database || !sameIdentifier(g.scope.id, from)) continue;
      await this.grants.create({ principal: g.principal, role: g.role, scope: { ...g.scope, id: to }, createdBy: g.createdBy });
      await this.grants.remove(g.id);
    }
  }

  /** The database a key is limited to, if any. */
  keyDatabase(p: Principal): string | null {
    return p.kind === "key" && p.key ? p.key.scope.database : null;
  }
}

function withinScope(inner: Scope, outer: Scope): boolean {
  if (outer.database !== null && inner.database !== outer.database) return false;
  if (outer.kind === "table") return inner.kind === "table" && joinIdentifier(inner.id) === joinIdentifier(outer.id);
  return outer.id.every((p, i) => inner.id[i] === p);
}

let instance: Access | undefined;

export function access(): Access {
  instance ??= new Access(rootStore(), ".quiver/auth/");
  return instance;
}
