"use client";
/**
 * A table's indexes: each with its type, columns, rows indexed and not yet indexed, size and distance; dropping one;
 * and building one, with the types a column can take, each parameter's default and meaning, and the checks the
 * engine would otherwise fail on (a vector index needs a vector column and enough rows to train).
 */
import { useEffect, useState } from "react";
import type { JsonField } from "@/lib/arrow-schema";
import { buildParameters, columnKind, indexTypeLabel, typesFor, type IndexParam, type IndexType } from "@/lib/index-types";
import { createIndexBody } from "@/lib/contract/operations/indexes";
import { useTable } from "@/lib/queries/catalog";
import { useCreateIndex, useDropIndex, useIndexes, useIndexStats, type IndexDescription } from "@/lib/queries/indexes";
import { useCompact, useRunningJob } from "@/lib/queries/maintenance";
import { Badge, Button, Field, Select, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { formatBytes } from "./format";

function DropIndexButton({ database, table, name }: { database: string; table: string[]; name: string }) {
  const [open, setOpen] = useState(false);
  const drop = useDropIndex(database, table);
  return (
    <>
      <Button variant="ghost" onClick={() => setOpen(true)} aria-label={`Drop index ${name}`}>
        Drop
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title={`Drop index ${name}?`}>
        <p className="text-sm">Queries that used it read the table without it: filters and searches get slower, vector searches become exhaustive.</p>
        {drop.isError && <ErrorBanner error={drop.error} />}
        <div className="mt-5 flex justify-end gap-2">
          <Button variant="ghost" onClick={() => setOpen(false)}>
            Cancel
          </Button>
          <Button variant="danger" disabled={drop.isPending} onClick={() => drop.mutate(name, { onSuccess: () => setOpen(false) })}>
            Drop index
          </Button>
        </div>
      </Dialog>
    </>
  );
}

function IndexRow({ database, table, index }: { database: string; table: string[]; index: IndexDescription }) {
  const stats = useIndexStats(database, table, index.index_name);
  const parameters = buildParameters(index.index_details);
  return (
    <tr className="border-t border-slate-200 dark:border-slate-800">
      <td className="py-2 pr-4 font-mono">{index.index_name}</td>
      <td className="pr-4">
        <Badge tone="indigo">{indexTypeLabel(index.index_type)}</Badge>
      </td>
      <td className="pr-4">{index.columns.join(", ")}</td>
      <td className="pr-4 text-right">{index.num_indexed_rows?.toLocaleString() ?? "—"}</td>
      <td className="pr-4 text-right">{index.num_unindexed_rows?.toLocaleString() ?? "—"}</td>
      <td className="whitespace-nowrap pr-4 text-right">{index.size_bytes !== undefined ? formatBytes(index.size_bytes) : "—"}</td>
      <td className="pr-4">{stats.data?.distance_type ?? ""}</td>
      <td className="max-w-xs pr-4 text-xs text-slate-600 dark:text-slate-300">
        <span className="line-clamp-2" title={parameters.join("\n")}>
          {parameters.join(" · ")}
        </span>
      </td>
      <td className="text-right">
        <DropIndexButton database={database} table={table} name={index.index_name} />
      </td>
    </tr>
  );
}

/**
 * Rows written since an index was built are searched without it. The engine indexes them as part of compaction, so
 * "Index new rows" starts that job; the overview shows its history.
 */
function NewRows({ database, table, indexes }: { database: string; table: string[]; indexes: IndexDescription[] }) {
  const running = useRunningJob(database, table);
  const compact = useCompact(database, table);
  const unindexed = Math.max(0, ...indexes.map((index) => index.num_unindexed_rows ?? 0));
  if (unindexed === 0 && !running) return null;
  return (
    <div className="mt-3 flex flex-wrap items-center gap-3 text-sm" data-testid="unindexed-rows">
      {running ? (
        <span role="status" className="text-indigo-700 dark:text-indigo-300">
          Maintenance is running on this table…
        </span>
      ) : (
        <>
          <span className="text-amber-700 dark:text-amber-300">
            {unindexed.toLocaleString()} rows written since the indexes were built are not in them yet: queries read those rows without the index.
          </span>
          <Button variant="secondary" disabled={compact.isPending} onClick={() => compact.mutate(undefined)}>
            Index new rows
          </Button>
        </>
      )}
      {compact.isError && <ErrorBanner error={compact.error} />}
    </div>
  );
}

function ParamInput({ param, value, onChange }: { param: IndexParam; value: string; onChange: (value: string) => void }) {
  const id = `index-param-${param.name}`;
  const hint = `${param.hint} Default: ${param.byDefault}.`;
  if (param.input === "select" || param.input === "boolean") {
    const options = param.input === "boolean" ? ["on", "off"] : param.options!;
    return (
      <Field label={param.label} htmlFor={id} hint={hint}>
        <Select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">default ({param.byDefault})</option>
          {options.map((o) => (
            <option key={o}>{o}</option>
          ))}
        </Select>
      </Field>
    );
  }
  return (
    <Field label={param.label} htmlFor={id} hint={hint}>
      <TextInput
        id={id}
        type={param.input === "number" ? "number" : "text"}
        min={param.input === "number" ? 1 : undefined}
        value={value}
        placeholder={`default: ${param.byDefault}`}
        onChange={(e) => onChange(e.target.value)}
      />
    </Field>
  );
}

/** What stops the index from being built as chosen, said before the engine says it. */
function problemOf(type: IndexType | undefined, field: JsonField | undefined, rows: number, values: Record<string, string>): string | null {
  if (!field || !type) return field ? `column ${field.name} (${field.type.type}) takes no index` : null;
  if (type.minRows && rows < type.minRows)
    return `a ${type.label} index is trained on the table's rows: it needs at least ${type.minRows}, and the table has ${rows}`;
  const partitions = Number(values.num_partitions);
  if (values.num_partitions && partitions > rows) return `${partitions} partitions need at least as many rows; the table has ${rows}`;
  const dimension = field.type.length ?? 0;
  const subVectors = Number(values.num_sub_vectors);
  if (values.num_sub_vectors && dimension && dimension % subVectors !== 0) return `sub-vectors must divide the dimension ${dimension}; ${subVectors} does not`;
  return null;
}

function CreateIndexForm({ database, table, fields, rows }: { database: string; table: string[]; fields: JsonField[]; rows: number }) {
  const indexable = fields.filter((f) => typesFor(f).length > 0);
  const [column, setColumn] = useState(indexable[0]?.name ?? "");
  const field = fields.find((f) => f.name === column);
  const types = field ? typesFor(field) : [];
  const [typeName, setTypeName] = useState<string>(types[0]?.type ?? "");
  const type = types.find((t) => t.type === typeName);
  const [values, setValues] = useState<Record<string, string>>({});
  const [name, setName] = useState("");
  const create = useCreateIndex(database, table);
  const [elapsed, setElapsed] = useState(0);
  useEffect(() => {
    if (!create.isPending) return;
    const timer = setInterval(() => setElapsed((s) => s + 1), 1000);
    return () => clearInterval(timer);
  }, [create.isPending]);
  const choose = (nextColumn: string) => {
    setColumn(nextColumn);
    const next = fields.find((f) => f.name === nextColumn);
    setTypeName(next ? (typesFor(next)[0]?.type ?? "") : "");
    setValues({});
  };
  const problem = problemOf(type, field, rows, values);
  const build = () => {
    if (!type) return;
    const request: Record<string, unknown> = { column, index_type: type.type, ...(name.trim() ? { name: name.trim() } : {}) };
    for (const param of type.params) {
      const value = values[param.name];
      if (!value) continue;
      request[param.name] = param.input === "number" ? Number(value) : param.input === "boolean" ? value === "on" : value;
    }
    setElapsed(0);
    // The request's fields come from the index type's parameters: the contract's schema checks what they make.
    create.mutate(createIndexBody.parse(request));
  };
  if (indexable.length === 0) return <p className="text-sm text-slate-500">No column of this table can take an index.</p>;
  return (
    <form
      className="flex flex-col gap-4"
      aria-label="Build an index"
      onSubmit={(e) => {
        e.preventDefault();
        build();
      }}
    >
      <div className="flex flex-wrap gap-4">
        <Field label="Column" htmlFor="index-column">
          <Select id="index-column" value={column} onChange={(e) => choose(e.target.value)}>
            {fields.map((f) => (
              <option key={f.name} value={f.name} disabled={typesFor(f).length === 0}>
                {f.name} ({f.type.type}
                {f.type.length ? `[${f.type.length}]` : ""}){typesFor(f).length === 0 ? ": no index type" : ""}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Type" htmlFor="index-type">
          <Select
            id="index-type"
            value={typeName}
            onChange={(e) => {
              setTypeName(e.target.value);
              setValues({});
            }}
          >
            {types.map((t) => (
              <option key={t.type} value={t.type}>
                {t.label}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Name" htmlFor="index-name" hint="Default: the column's name and _idx.">
          <TextInput id="index-name" value={name} placeholder={`${column}_idx`} onChange={(e) => setName(e.target.value)} />
        </Field>
      </div>
      {type && <p className="text-sm text-slate-600 dark:text-slate-300">{type.description}</p>}
      {field && columnKind(field) === "vector" && <p className="text-xs text-slate-500">Vectors of dimension {field.type.length}.</p>}
      {type && type.params.length > 0 && (
        <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {type.params.map((param) => (
            <ParamInput key={param.name} param={param} value={values[param.name] ?? ""} onChange={(value) => setValues({ ...values, [param.name]: value })} />
          ))}
        </div>
      )}
      {problem && (
        <p role="alert" className="text-sm text-amber-700 dark:text-amber-300">
          {problem}
        </p>
      )}
      {create.isError && <ErrorBanner error={create.error} />}
      {create.isSuccess && !create.isPending && <p className="text-sm text-green-700 dark:text-green-400">Index built.</p>}
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={!!problem || !type || create.isPending}>
          Build index
        </Button>
        {create.isPending && (
          <span role="status" className="text-sm text-indigo-700 dark:text-indigo-300">
            Building… {elapsed} s
          </span>
        )}
      </div>
    </form>
  );
}

export function IndexesTab({ database, table }: { database: string; table: string[] }) {
  const described = useTable(database, table);
  const indexes = useIndexes(database, table);
  if (described.isPending) return <Loading />;
  if (described.isError) return <ErrorBanner error={described.error} />;
  if (described.data.is_only_declared) return <Empty title="No data yet">Indexes are built on a table's rows: write data first.</Empty>;
  return (
    <div className="flex flex-col gap-6">
      <section aria-labelledby="indexes" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="indexes" className="mb-3 font-semibold">
          Indexes
        </h2>
        {indexes.isPending ? (
          <Loading />
        ) : indexes.isError ? (
          <ErrorBanner error={indexes.error} />
        ) : indexes.data.indexes.length === 0 ? (
          <p className="text-sm text-slate-500">This table has no index: every filter and search reads all of it.</p>
        ) : (
          <table className="w-full text-sm" aria-label="Indexes">
            <thead className="text-left text-xs text-slate-500">
              <tr>
                <th className="pb-1 pr-4 font-medium">Name</th>
                <th className="pr-4 font-medium">Type</th>
                <th className="pr-4 font-medium">Columns</th>
                <th className="pr-4 text-right font-medium">Indexed rows</th>
                <th className="pr-4 text-right font-medium">Unindexed rows</th>
                <th className="pr-4 text-right font-medium">Size</th>
                <th className="pr-4 font-medium">Distance</th>
                <th className="pr-4 font-medium">Built with</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {indexes.data.indexes.map((index) => (
                <IndexRow key={index.index_name} database={database} table={table} index={index} />
              ))}
            </tbody>
          </table>
        )}
        {indexes.data && <NewRows database={database} table={table} indexes={indexes.data.indexes} />}
      </section>
      <section aria-labelledby="build-index" className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
        <h2 id="build-index" className="mb-3 font-semibold">
          Build an index
        </h2>
        <CreateIndexForm database={database} table={table} fields={described.data.schema?.fields ?? []} rows={described.data.stats?.num_rows ?? 0} />
      </section>
    </div>
  );
}
