"use client";
/** Reading and writing scopes: a namespace subtree or one table, in one database or all of them. */
import type { KeyRole, Role, Scope } from "@/lib/queries/access";
import { Field, Select, TextInput } from "../ui/controls";
import { joinIdentifier, DELIMITER } from "@/lib/identifiers";

export function formatScope(scope: Scope): string {
  const where = scope.id.length === 0 ? "everything" : `${scope.kind === "table" ? "table" : "namespace"} ${joinIdentifier(scope.id)}`;
  return `${where}${scope.database ? ` in ${scope.database}` : ""}`;
}

export interface ScopeDraft {
  kind: "namespace" | "table";
  id: string;
  database: string;
}

export const emptyScope: ScopeDraft = { kind: "namespace", id: "", database: "" };

export function toScope(draft: ScopeDraft): Scope {
  return { kind: draft.kind, id: draft.id.trim() ? draft.id.trim().split(DELIMITER) : [], database: draft.database.trim() || null };
}

export function ScopeFields({ value, onChange, prefix }: { value: ScopeDraft; onChange: (v: ScopeDraft) => void; prefix: string }) {
  return (
    <>
      <Field label="Scope" htmlFor={`${prefix}-kind`}>
        <Select id={`${prefix}-kind`} value={value.kind} onChange={(e) => onChange({ ...value, kind: e.target.value as ScopeDraft["kind"] })}>
          <option value="namespace">Namespace subtree</option>
          <option value="table">One table</option>
        </Select>
      </Field>
      <Field label={value.kind === "table" ? "Table (parts joined by $)" : "Namespace (empty = everything)"} htmlFor={`${prefix}-id`}>
        <TextInput
          id={`${prefix}-id`}
          value={value.id}
          onChange={(e) => onChange({ ...value, id: e.target.value })}
          placeholder={value.kind === "table" ? "e.g. sales$orders" : "e.g. sales"}
        />
      </Field>
      <Field label="Database (empty = all)" htmlFor={`${prefix}-db`}>
        <TextInput id={`${prefix}-db`} value={value.database} onChange={(e) => onChange({ ...value, database: e.target.value })} placeholder="all databases" />
      </Field>
    </>
  );
}

export function RoleField<R extends Role | KeyRole>({
  id,
  value,
  onChange,
  forKey = false,
}: {
  id: string;
  value: R;
  onChange: (role: R) => void;
  forKey?: boolean;
}) {
  return (
    <Field label="Role" htmlFor={id}>
      <Select id={id} value={value} onChange={(e) => onChange(e.target.value as R)}>
        <option value="viewer">viewer: read metadata and data</option>
        <option value="editor">editor: also write data, tags, columns</option>
        <option value="admin">admin: also drop, namespaces, access</option>
        {forKey && <option value="metrics">metrics: scrape /metrics only</option>}
      </Select>
    </Field>
  );
}
