"use client";
import Link from "next/link";
import { useState } from "react";
import { castTargets } from "@/lib/arrow-schema";
import { flattenFields, previewSchema, toRequest, type AlterationDraft } from "@/lib/alterations";
import { diffSchemas, typeLabel } from "@/lib/schema-diff";
import { useAlterColumns, useTable } from "@/lib/queries/catalog";
import { tableHref } from "@/lib/console-links";
import { Button, Select, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { SchemaDiff } from "./schema-tab";
import { SchemaTree } from "./schema-tree";

export function ColumnsTab({ database, table }: { database: string; table: string[] }) {
  const described = useTable(database, table);
  const alter = useAlterColumns(database, table);
  const [drafts, setDrafts] = useState<Record<string, AlterationDraft>>({});
  if (described.isPending) return <Loading />;
  if (described.isError) return <ErrorBanner error={described.error} />;
  const schema = described.data.schema;
  if (!schema) return <Empty title="No columns yet">A declared-only table gets its columns from its first data.</Empty>;
  const rows = flattenFields(schema.fields);
  const list = Object.values(drafts).filter((d) => d.rename || d.nullable !== undefined || d.type);
  const preview = previewSchema(schema, list);

  function update(path: string[], change: Partial<AlterationDraft>) {
    const key = path.join("\u0000");
    setDrafts((all) => ({ ...all, [key]: { ...(all[key] ?? { path }), ...change } }));
    alter.reset();
  }

  return (
    <div className="flex flex-col gap-6">
      <table className="w-full text-left text-sm" data-testid="columns-editor">
        <thead className="text-xs uppercase text-slate-500">
          <tr>
            <th className="py-2 pr-3">Column</th>
            <th className="pr-3">Type</th>
            <th className="pr-3">Rename to</th>
            <th className="pr-3">Change type to</th>
            <th>Nullable</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ path, field }) => {
            const key = path.join("\u0000");
            const d = drafts[key] ?? { path };
            const targets = castTargets(field.type.type);
            const label = path.join(".");
            return (
              <tr key={key} className="border-t border-slate-100 dark:border-slate-800">
                <td className="py-1.5 pr-3 font-mono" style={{ paddingLeft: `${(path.length - 1) * 1.25}rem` }}>
                  {field.name}
                </td>
                <td className="pr-3 font-mono text-indigo-700 dark:text-indigo-300">{typeLabel(field.type)}</td>
                <td className="pr-3">
                  <TextInput
                    aria-label={`Rename ${label}`}
                    value={d.rename ?? ""}
                    placeholder={field.name}
                    onChange={(e) => update(path, { rename: e.target.value || undefined })}
                    className="w-40"
                  />
                </td>
                <td className="pr-3">
                  {targets.length ? (
                    <Select aria-label={`Type of ${label}`} value={d.type ?? ""} onChange={(e) => update(path, { type: e.target.value || undefined })}>
                      <option value="">keep {field.type.type}</option>
                      {targets.map((t) => (
                        <option key={t} value={t}>
                          {t}
                        </option>
                      ))}
                    </Select>
                  ) : (
                    <span className="text-xs text-slate-500">no safe cast</span>
                  )}
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`${label} nullable`}
                    checked={d.nullable ?? field.nullable}
                    onChange={(e) => update(path, { nullable: e.target.checked === field.nullable ? undefined : e.target.checked })}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <section aria-labelledby="alter-preview" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="alter-preview" className="mb-2 font-semibold">
          Preview {list.length ? `(${list.length} alteration${list.length > 1 ? "s" : ""})` : ""}
        </h2>
        {list.length === 0 ? (
          <p className="text-sm text-slate-500">
            Rename a column, change its type within its family, or make it nullable; the resulting schema shows here before anything is applied.
          </p>
        ) : (
          <div className="flex flex-col gap-4">
            <SchemaDiff changes={diffSchemas(schema, preview)} />
            <SchemaTree fields={preview.fields} />
            <div className="flex gap-2">
              <Button
                onClick={() =>
                  alter.mutateAsync(toRequest(list)).then(
                    () => setDrafts({}),
                    () => undefined,
                  )
                }
                disabled={alter.isPending}
              >
                {alter.isPending ? "Applying…" : "Apply alterations"}
              </Button>
              <Button variant="secondary" onClick={() => setDrafts({})}>
                Discard
              </Button>
            </div>
          </div>
        )}
        <div className="mt-3">
          <ErrorBanner error={alter.error} onDismiss={alter.reset} />
        </div>
        {alter.data && (
          <p role="status" className="mt-3 text-sm text-emerald-700 dark:text-emerald-300">
            Applied as{" "}
            <Link className="underline" href={tableHref(database, table, "schema", { version: alter.data.version })}>
              version {alter.data.version}
            </Link>
            .
          </p>
        )}
      </section>
    </div>
  );
}
