"use client";
import { useState } from "react";
import { useApiKeys, useCreateApiKey, useRevokeApiKey, type ApiKey, type KeyRole } from "@/lib/queries/access";
import { Badge, Button, Field, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { emptyScope, formatScope, RoleField, ScopeFields, toScope } from "./scope";

function status(key: ApiKey): { label: string; tone: "green" | "red" | "amber" } {
  if (key.revokedAt) return { label: "revoked", tone: "red" };
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return { label: "expired", tone: "amber" };
  return { label: "active", tone: "green" };
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "never");

function CreateKeyForm() {
  const create = useCreateApiKey();
  const [name, setName] = useState("");
  const [role, setRole] = useState<KeyRole>("viewer");
  const [scope, setScope] = useState(emptyScope);
  const [expires, setExpires] = useState("");
  const [copied, setCopied] = useState(false);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setCopied(false);
    await create.mutateAsync({ name, role, scope: toScope(scope), expires_at: expires ? new Date(expires).toISOString() : null }).catch(() => undefined);
  }

  return (
    <section aria-labelledby="create-key" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
      <h2 id="create-key" className="font-semibold">
        Create an API key
      </h2>
      <form onSubmit={submit} className="mt-3 grid grid-cols-1 gap-3 sm:grid-cols-3">
        <Field label="Name" htmlFor="key-name">
          <TextInput id="key-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="e.g. nightly-loader" />
        </Field>
        <RoleField id="key-role" value={role} onChange={setRole} forKey />
        <Field label="Expires (optional)" htmlFor="key-expires">
          <TextInput id="key-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </Field>
        <ScopeFields value={scope} onChange={setScope} prefix="key-scope" />
        <div className="sm:col-span-3">
          <Button type="submit" disabled={create.isPending || !name.trim()}>
            {create.isPending ? "Creating…" : "Create key"}
          </Button>
        </div>
      </form>
      <div className="mt-3">
        <ErrorBanner error={create.error} onDismiss={create.reset} />
      </div>
      {create.data && (
        <div className="mt-3 rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm dark:border-emerald-800 dark:bg-emerald-950">
          <p className="font-medium">Key “{create.data.record.name}” created. Copy it now: it is not shown again.</p>
          <div className="mt-2 flex items-center gap-2">
            <code data-testid="new-api-key" className="break-all rounded bg-white px-2 py-1 font-mono text-xs dark:bg-slate-900">
              {create.data.key}
            </code>
            <Button
              type="button"
              variant="secondary"
              onClick={() =>
                navigator.clipboard?.writeText(create.data.key).then(
                  () => setCopied(true),
                  () => setCopied(false),
                )
              }
            >
              {copied ? "Copied" : "Copy"}
            </Button>
          </div>
        </div>
      )}
    </section>
  );
}

export function ApiKeysPanel() {
  const keys = useApiKeys();
  const revoke = useRevokeApiKey();
  return (
    <div className="flex flex-col gap-6">
      <CreateKeyForm />
      <section aria-labelledby="key-list">
        <h2 id="key-list" className="mb-2 font-semibold">
          Keys
        </h2>
        <ErrorBanner error={keys.error ?? revoke.error} onDismiss={revoke.reset} />
        {keys.isPending ? (
          <Loading label="Loading keys…" />
        ) : keys.data?.keys.length === 0 ? (
          <Empty title="No API keys yet">Create one above for a program or a colleague.</Empty>
        ) : (
          <table className="w-full text-left text-sm">
            <thead className="text-xs uppercase text-slate-500">
              <tr>
                <th className="py-2 pr-3">Name</th>
                <th className="pr-3">Role</th>
                <th className="pr-3">Scope</th>
                <th className="pr-3">Status</th>
                <th className="pr-3">Expires</th>
                <th className="pr-3">Last used</th>
                <th className="pr-3">Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {keys.data?.keys.map((k) => {
                const s = status(k);
                return (
                  <tr key={k.id} className="border-t border-slate-200 dark:border-slate-800" data-testid={`key-row-${k.name}`}>
                    <td className="py-2 pr-3 font-medium">{k.name}</td>
                    <td className="pr-3">{k.role}</td>
                    <td className="pr-3">{formatScope(k.scope)}</td>
                    <td className="pr-3">
                      <Badge tone={s.tone}>{s.label}</Badge>
                    </td>
                    <td className="pr-3">{k.expiresAt ? when(k.expiresAt) : "never"}</td>
                    <td className="pr-3">{when(k.lastUsedAt)}</td>
                    <td className="pr-3">
                      {when(k.createdAt)} by {k.createdBy}
                    </td>
                    <td className="text-right">
                      {!k.revokedAt && (
                        <Button variant="danger" onClick={() => revoke.mutate(k.id)} disabled={revoke.isPending} aria-label={`Revoke ${k.name}`}>
                          Revoke
                        </Button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
