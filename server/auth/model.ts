/** Who is calling, what roles exist, and what a grant or key covers. */
import "server-only";

import { ROLES, type KeyRole, type Role, type Scope } from "@/lib/contract/access";

export { ROLES, type KeyRole, type Role, type Scope };

export const roleRank = (role: Role | null): number => (role === null ? -1 : ROLES.indexOf(role));
export const maxRole = (a: Role | null, b: Role | null): Role | null => (roleRank(a) >= roleRank(b) ? a : b);

export interface ApiKeyRecord {
  id: string;
  name: string;
  role: KeyRole;
  scope: Scope;
  hash: string;
  createdAt: string;
  createdBy: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface GrantRecord {
  id: string;
  principal: { type: "user" | "group" | "key"; name: string };
  role: Role;
  scope: Scope;
  createdAt: string;
  createdBy: string;
}

export type Principal =
  | { kind: "user"; id: string; name: string; email?: string; groups: string[]; admin: boolean }
  | { kind: "key"; id: string; name: string; key: ApiKeyRecord | null; admin: boolean };

export function covers(scope: Scope, database: string, target: string[]): boolean {
  if (scope.database !== null && scope.database !== database) return false;
  if (scope.kind === "table") return scope.id.length === target.length && scope.id.every((p, i) => p === target[i]);
  return scope.id.length <= target.length && scope.id.every((p, i) => p === target[i]);
}

/** True when some part of `scope` lies inside namespace `namespace` (so the namespace is worth showing). */
export function reachesInto(scope: Scope, database: string, namespace: string[]): boolean {
  if (scope.database !== null && scope.database !== database) return false;
  return namespace.length <= scope.id.length && namespace.every((p, i) => p === scope.id[i]);
}

export function describePrincipal(p: Principal): { kind: string; id: string; name: string } {
  return { kind: p.kind, id: p.id, name: p.name };
}
