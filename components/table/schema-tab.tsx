"use client";
import { useTable } from "@/lib/queries/catalog";
import { diffSchemas, typeLabel, type Change } from "@/lib/schema-diff";
import { Badge } from "../ui/controls";
import { ErrorBanner, Loading } from "../ui/states";
import { SchemaMetadata } from "./schema-metadata";
import { SchemaTree } from "./schema-tree";
import { fromPicker, pickerValue, refOf, VersionPicker } from "./version-picker";
import { useTableAddress } from "./use-table-address";

const CHANGE_STYLE: Record<Change["kind"], string> = {
  same: "",
  added: "bg-emerald-50 dark:bg-emerald-950/50",
  removed: "bg-red-50 dark:bg-red-950/50",
  renamed: "bg-amber-50 dark:bg-amber-950/50",
  changed: "bg-indigo-50 dark:bg-indigo-950/50",
};

export function SchemaDiff({ changes }: { changes: Change[] }) {
  const shown = changes.filter((c) => c.kind !== "same");
  if (shown.length === 0) return <p className="text-sm text-slate-500">The schemas are the same.</p>;
  return (
    <table className="w-full text-left text-sm" data-testid="schema-diff">
      <thead className="text-xs uppercase text-slate-500">
        <tr>
          <th className="py-2 pr-3">Change</th>
          <th className="pr-3">Before</th>
          <th>After</th>
        </tr>
      </thead>
      <tbody>
        {shown.map((c, i) => (
          <tr key={i} className={`border-t border-slate-100 dark:border-slate-800 ${CHANGE_STYLE[c.kind]}`}>
            <td className="py-1.5 pr-3">
              <Badge tone={c.kind === "added" ? "green" : c.kind === "removed" ? "red" : c.kind === "renamed" ? "amber" : "indigo"}>{c.kind}</Badge>
            </td>
            <td className="pr-3 font-mono">
              {c.kind === "added" ? "—" : c.kind === "renamed" ? `${[...c.path.slice(0, -1), c.from].join(".")}` : c.path.join(".")}
              {c.kind === "changed" && ` : ${typeLabel(c.before.type)}${c.before.nullable ? "" : " (required)"}`}
            </td>
            <td className="font-mono">
              {c.kind === "removed" ? "—" : `${c.path.join(".")} : ${typeLabel(c.field.type)}${c.field.nullable ? "" : " (required)"}`}
              {c.kind === "changed" && <span className="ml-2 font-sans text-xs text-slate-600 dark:text-slate-300">{c.what.join(", ")}</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SchemaTab({ database, table }: { database: string; table: string[] }) {
  const address = useTableAddress();
  const at = refOf({ version: address.get("version"), tag: address.get("tag") });
  const compare = address.get("compare");
  const current = useTable(database, table, at);
  const other = useTable(database, table, compare ? refOf(fromPicker(compare)) : {});
  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-4">
        <VersionPicker
          database={database}
          table={table}
          id="schema-at"
          label="Schema at"
          value={pickerValue(address.get("version"), address.get("tag"))}
          onChange={(v) => address.set({ version: fromPicker(v).version, tag: fromPicker(v).tag })}
        />
        <VersionPicker
          database={database}
          table={table}
          id="schema-compare"
          label="Compare with"
          value={compare ?? ""}
          onChange={(v) => address.set({ compare: v || undefined })}
        />
      </div>
      <ErrorBanner error={current.error ?? (compare ? other.error : null)} />
      {current.isPending ? (
        <Loading />
      ) : !current.data?.schema ? (
        <p className="text-sm text-slate-500">This table is declared only: it has no schema until data is written.</p>
      ) : compare && other.data?.schema ? (
        <div className="flex flex-col gap-4">
          <p className="text-sm text-slate-600 dark:text-slate-300">
            Changes from {compare.startsWith("tag:") ? `tag ${compare.slice(4)}` : `version ${compare.slice(2)}`} (v{other.data.version}) to version{" "}
            {current.data.version}:
          </p>
          <SchemaDiff changes={diffSchemas(other.data.schema, current.data.schema)} />
          <div className="grid gap-4 lg:grid-cols-2">
            <section aria-label="Before">
              <h3 className="mb-1 text-sm font-semibold">Version {other.data.version}</h3>
              <SchemaTree fields={other.data.schema.fields} />
            </section>
            <section aria-label="After">
              <h3 className="mb-1 text-sm font-semibold">Version {current.data.version}</h3>
              <SchemaTree fields={current.data.schema.fields} />
            </section>
          </div>
        </div>
      ) : (
        <>
          <p className="text-sm text-slate-500">Version {current.data.version}</p>
          <SchemaTree fields={current.data.schema.fields} />
          <SchemaMetadata database={database} table={table} metadata={current.data.schema.metadata} latest={at.version === undefined && at.tag === undefined} />
        </>
      )}
    </div>
  );
}
