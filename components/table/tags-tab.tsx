"use client";
import Link from "next/link";
import { useState } from "react";
import { useCreateTag, useDeleteTag, useTable, useTags, useUpdateTag, useVersions } from "@/lib/queries/catalog";
import { diffSchemas } from "@/lib/schema-diff";
import { tableHref } from "@/lib/console-links";
import { Button, Field, Select, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { SchemaDiff } from "./schema-tab";

/** What moving a tag changes: rows, size and schema between the two versions. */
function MovePreview({ database, table, from, to }: { database: string; table: string[]; from: number; to: number }) {
  const a = useTable(database, table, { version: from });
  const b = useTable(database, table, { version: to });
  if (a.isPending || b.isPending) return <Loading label="Comparing versions…" />;
  if (a.isError || b.isError) return <ErrorBanner error={a.error ?? b.error} />;
  const rowsA = a.data.stats?.num_rows ?? 0;
  const rowsB = b.data.stats?.num_rows ?? 0;
  const delta = rowsB - rowsA;
  return (
    <div className="flex flex-col gap-2 text-sm" data-testid="move-preview">
      <p className="text-base">
        version <strong>{from}</strong> → version <strong>{to}</strong>
      </p>
      <p>
        rows {rowsA.toLocaleString()} → {rowsB.toLocaleString()} ({delta >= 0 ? "+" : ""}
        {delta.toLocaleString()})
      </p>
      {a.data.schema && b.data.schema && <SchemaDiff changes={diffSchemas(a.data.schema, b.data.schema)} />}
    </div>
  );
}

export function TagsTab({ database, table }: { database: string; table: string[] }) {
  const tags = useTags(database, table);
  const versions = useVersions(database, table);
  const create = useCreateTag(database, table);
  const update = useUpdateTag(database, table);
  const remove = useDeleteTag(database, table);
  const [name, setName] = useState("");
  const [version, setVersion] = useState("");
  const [moving, setMoving] = useState<{ tag: string; from: number; to: string } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const versionList = versions.data?.pages.flatMap((p) => p.versions.map((v) => v.version)) ?? [];
  const entries = Object.entries(tags.data?.tags ?? {}).sort(([a], [b]) => a.localeCompare(b));

  return (
    <div className="flex flex-col gap-6">
      <form
        aria-label="Create a tag"
        className="flex flex-wrap items-end gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutateAsync({ tag: name, version: Number(version) }).then(
            () => setName(""),
            () => undefined,
          );
        }}
      >
        <Field label="New tag" htmlFor="tag-name">
          <TextInput id="tag-name" value={name} onChange={(e) => setName(e.target.value)} required />
        </Field>
        <Field label="At version" htmlFor="tag-version">
          <Select id="tag-version" value={version} onChange={(e) => setVersion(e.target.value)} required>
            <option value="">choose…</option>
            {versionList.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </Select>
        </Field>
        <Button type="submit" disabled={!name || !version || create.isPending}>
          Create tag
        </Button>
      </form>
      <ErrorBanner error={create.error ?? remove.error} onDismiss={() => (create.reset(), remove.reset())} />
      {tags.isPending ? (
        <Loading />
      ) : entries.length === 0 ? (
        <Empty title="No tags">Tags name versions so that readers can pin them.</Empty>
      ) : (
        <table className="w-full text-left text-sm" data-testid="tags-table">
          <thead className="text-xs uppercase text-slate-500">
            <tr>
              <th className="py-2 pr-3">Tag</th>
              <th className="pr-3">Version</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {entries.map(([tag, t]) => (
              <tr key={tag} className="border-t border-slate-100 dark:border-slate-800" data-testid={`tag-row-${tag}`}>
                <td className="py-1.5 pr-3 font-mono">{tag}</td>
                <td className="pr-3">
                  <Link className="text-indigo-600 underline" href={tableHref(database, table, "data", { tag })}>
                    {t.version}
                  </Link>
                </td>
                <td className="whitespace-nowrap text-right">
                  <Button variant="ghost" onClick={() => setMoving({ tag, from: t.version, to: "" })} aria-label={`Move tag ${tag}`}>
                    Move
                  </Button>
                  <Button variant="ghost" onClick={() => remove.mutate(tag)} aria-label={`Delete tag ${tag}`}>
                    Delete
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Dialog
        open={moving !== null}
        onClose={() => {
          setMoving(null);
          setConfirming(false);
          update.reset();
        }}
        title={`Move tag ${moving?.tag ?? ""}`}
      >
        {moving && (
          <div className="flex flex-col gap-3">
            <Field label="To version" htmlFor="move-to">
              <Select id="move-to" value={moving.to} onChange={(e) => (setMoving({ ...moving, to: e.target.value }), setConfirming(false))}>
                <option value="">choose…</option>
                {versionList
                  .filter((v) => v !== moving.from)
                  .map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))}
              </Select>
            </Field>
            {moving.to && <MovePreview database={database} table={table} from={moving.from} to={Number(moving.to)} />}
            <ErrorBanner error={update.error} />
            <div className="flex justify-end gap-2">
              <Button variant="secondary" onClick={() => setMoving(null)}>
                Cancel
              </Button>
              {!confirming ? (
                <Button disabled={!moving.to} onClick={() => setConfirming(true)}>
                  Move tag
                </Button>
              ) : (
                <Button
                  variant="danger"
                  disabled={update.isPending}
                  onClick={() =>
                    update.mutateAsync({ tag: moving.tag, version: Number(moving.to) }).then(
                      () => {
                        setMoving(null);
                        setConfirming(false);
                      },
                      () => undefined,
                    )
                  }
                >
                  Confirm move {moving.from} → {moving.to}
                </Button>
              )}
            </div>
          </div>
        )}
      </Dialog>
    </div>
  );
}
