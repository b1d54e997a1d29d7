"use client";
import { useState } from "react";
import { useCreateGrant, useDeleteGrant, useGrants, type Grant, type Role } from "@/lib/queries/access";
import { Badge, Button, Field, Select, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { emptyScope, formatScope, RoleField, ScopeFields, toScope } from "./scope";

export function GrantsPanel() {
  const grants = useGrants();
  const create = useCreateGrant();
  const remove = useDeleteGrant();
  const [principalType, setPrincipalType] = useState<Grant["principal"]["type"]>("user");
  const [principalName, setPrincipalName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [scope, setScope] = useState(emptyScope);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    await create
      .mutateAsync({ principal: { type: principalType, name: principalName.trim() }, role, scope: toScope(scope) })
      .then(() => setPrincipalName(""))
      .catch(() => undefined);
  }

  return (
    <div className="flex flex-col gap-6">
      <section aria-labelledby="add-grant" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="add-grant" className="font-semibold">
          Grant a role
        </h2>
        <form onSubmit={submit} className="mt-3 grid grid-cols-1 gap-3 sm:grid-cols-3">
          <Field label="Principal type" htmlFor="grant-type">
            <Select id="grant-type" value={principalType} onChange={(e) => setPrincipalType(e.target.value as Grant["principal"]["type"])}>
              <option value="user">User (subject or email)</option>
              <option value="group">Group (from the token's groups claim)</option>
              <option value="key">API key (its id)</option>
            </Select>
          </Field>
          <Field label="Principal" htmlFor="grant-name">
            <TextInput id="grant-name" value={principalName} onChange={(e) => setPrincipalName(e.target.value)} required placeholder="e.g. ana@example.com" />
          </Field>
          <RoleField id="grant-role" value={role} onChange={setRole} />
          <ScopeFields value={scope} onChange={setScope} prefix="grant-scope" />
          <div className="sm:col-span-3">
            <Button type="submit" disabled={create.isPending || !principalName.trim()}>
              {create.isPending ? "Granting…" : "Add grant"}
            </Button>
          </div>
        </form>
        <div className="mt-3">
          <ErrorBanner error={create.error} onDismiss={create.reset} />
        </div>
      </section>
      <section aria-labelledby="grant-list">
        <h2 id="grant-list" className="mb-2 font-semibold">
          Grants
        </h2>
        <ErrorBanner error={grants.error ?? remove.error} onDismiss={remove.reset} />
        {grants.isPending ? (
          <Loading label="Loading grants…" />
        ) : grants.data?.grants.length === 0 ? (
          <Empty title="No grants yet">Grants give users, groups and keys a role on a namespace subtree or a table.</Empty>
        ) : (
          <table className="w-full text-left text-sm">
            <thead className="text-xs uppercase text-slate-500">
              <tr>
                <th className="py-2 pr-3">Principal</th>
                <th className="pr-3">Role</th>
                <th className="pr-3">On</th>
                <th className="pr-3">Granted</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {grants.data?.grants.map((g) => (
                <tr key={g.id} className="border-t border-slate-200 dark:border-slate-800" data-testid="grant-row">
                  <td className="py-2 pr-3">
                    <Badge tone="indigo">{g.principal.type}</Badge> <span className="font-medium">{g.principal.name}</span>
                  </td>
                  <td className="pr-3">{g.role}</td>
                  <td className="pr-3">{formatScope(g.scope)}</td>
                  <td className="pr-3">
                    {new Date(g.createdAt).toLocaleString()} by {g.createdBy}
                  </td>
                  <td className="text-right">
                    <Button
                      variant="danger"
                      onClick={() => remove.mutate(g.id)}
                      disabled={remove.isPending}
                      aria-label={`Remove grant for ${g.principal.name}`}
                    >
                      Remove
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
