"use client";
import { useState } from "react";
import { columnKind } from "@/lib/index-types";
import { defaultRowOrder, type DefaultRowOrder, type RowOrder } from "@/lib/row-order";
import { useCount, useRows, useTable } from "@/lib/queries/catalog";
import { Button, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { fromPicker, pickerValue, refOf, VersionPicker } from "./version-picker";
import { useTableAddress } from "./use-table-address";
import { RowsGrid } from "./rows-grid";
import { SearchPanel, type SearchKind } from "./search-panel";
import { mediaProjection, useMediaGrid } from "./use-media-grid";

const MODES: Array<[SearchKind | "", string]> = [
  ["", "Browse"],
  ["vector", "Vector search"],
  ["text", "Full-text search"],
];

const PAGE = 50;
export function DataTab({ database, table }: { database: string; table: string[] }) {
  const address = useTableAddress();
  const at = refOf({ version: address.get("version"), tag: address.get("tag") });
  const filter = address.get("filter") ?? "";
  const offset = Number(address.get("offset") ?? 0);
  const selected = address.get("columns")?.split(",").filter(Boolean);
  // `sort=name` orders by that column ascending, `sort=-name` descending.
  const sortParam = address.get("sort");
  const chosenOrder = sortParam ? { column: sortParam.replace(/^-/, ""), ascending: !sortParam.startsWith("-") } : undefined;
  const [draftFilter, setDraftFilter] = useState(filter);
  const search = address.get("search");
  const mode: SearchKind | "" = search === "vector" || search === "text" ? search : "";
  const [seed, setSeed] = useState<{ column: string; vector: number[]; n: number } | null>(null);
  const described = useTable(database, table, at);
  const allColumns = described.data?.schema?.fields.map((f) => f.name) ?? [];
  const columns = selected && selected.length ? selected : undefined;
  const declaredOnly = described.data?.is_only_declared ?? false;
  const browsing = Boolean(described.data) && !declaredOnly && mode === "";
  const fields = described.data?.schema?.fields ?? [];
  const sort: RowOrder | DefaultRowOrder | undefined = chosenOrder ?? defaultRowOrder(fields, described.data?.stats?.num_rows);
  const projection = mediaProjection(fields, columns);
  // Row ids hold for one version: with media shown, the rows are read at the version described.
  const rowsAt = projection.media.length ? { version: described.data?.version } : at;
  const rows = useRows(
    database,
    table,
    { ...rowsAt, columns: projection.columns, filter, limit: PAGE, offset, withRowId: projection.media.length > 0, sort },
    browsing,
  );
  const media = useMediaGrid(database, table, described.data?.version, projection, rows.data);
  const count = useCount(database, table, { version: described.data?.version, filter }, browsing);
  const vectorColumn = fields.find((f) => columnKind(f) === "vector")?.name;

  if (described.isPending) return <Loading />;
  if (declaredOnly) return <Empty title="No data yet">This table is declared only. Upload a file or insert through the API to create it.</Empty>;
  const data = rows.data;
  return (
    <div className="flex flex-col gap-3">
      <nav aria-label="Data views" className="flex gap-1">
        {MODES.map(([id, label]) => (
          <Button
            key={id}
            variant={mode === id ? "primary" : "ghost"}
            aria-pressed={mode === id}
            onClick={() => address.set({ search: id || undefined, offset: undefined })}
          >
            {label}
          </Button>
        ))}
      </nav>
      <div className="flex flex-wrap items-end gap-4">
        <VersionPicker
          database={database}
          table={table}
          id="data-at"
          label="Rows at"
          value={pickerValue(address.get("version"), address.get("tag"))}
          onChange={(v) => address.set({ ...fromPicker(v), offset: undefined })}
        />
        <form
          className="flex items-center gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            address.set({ filter: draftFilter, offset: undefined });
          }}
        >
          <TextInput
            aria-label="Filter expression"
            placeholder="SQL filter, e.g. id > 10 AND name LIKE 'a%'"
            value={draftFilter}
            onChange={(e) => setDraftFilter(e.target.value)}
            className="w-96"
          />
          <Button type="submit" variant="secondary">
            Apply
          </Button>
        </form>
      </div>
      {mode !== "" ? (
        <SearchPanel
          key={`${mode}-${seed?.n ?? 0}`}
          database={database}
          table={table}
          kind={mode}
          fields={fields}
          at={at}
          version={described.data?.version}
          filter={filter}
          seed={mode === "vector" && seed ? seed : null}
        />
      ) : (
        <>
          <fieldset className="flex flex-wrap gap-3 text-sm">
            <legend className="mb-1 text-xs font-medium text-slate-600 dark:text-slate-300">Columns</legend>
            {allColumns.map((c) => (
              <label key={c} className="flex items-center gap-1">
                <input
                  type="checkbox"
                  checked={!columns || columns.includes(c)}
                  onChange={(e) => {
                    const base = columns ?? allColumns;
                    const next = e.target.checked ? allColumns.filter((x) => base.includes(x) || x === c) : base.filter((x) => x !== c);
                    address.set({ columns: next.length === allColumns.length ? undefined : next.join(","), offset: undefined });
                  }}
                />
                <span className="font-mono">{c}</span>
              </label>
            ))}
          </fieldset>
          <ErrorBanner error={rows.error ?? count.error} />
          {rows.isPending ? (
            <Loading label="Reading rows…" />
          ) : data ? (
            <>
              <RowsGrid
                data={data}
                label="Rows"
                media={media}
                sort={{
                  by: sort,
                  // Each click on a column's header: ascending, then descending, then the default order.
                  toggle: (column) =>
                    address.set({
                      sort: sort?.column !== column ? column : sort.ascending ? `-${column}` : undefined,
                      offset: undefined,
                    }),
                }}
                rowAction={
                  vectorColumn && !columns?.every((c) => c !== vectorColumn)
                    ? (row) => (
                        <Button
                          variant="ghost"
                          className="px-1 py-0 text-xs"
                          title={`Find rows whose ${vectorColumn} is nearest to this row's`}
                          onClick={() => {
                            const value = row[vectorColumn] as ArrayLike<number> | null;
                            if (!value) return;
                            setSeed({ column: vectorColumn, vector: Array.from(value), n: (seed?.n ?? 0) + 1 });
                            address.set({ search: "vector", offset: undefined });
                          }}
                        >
                          Similar
                        </Button>
                      )
                    : undefined
                }
              />
              <div className="flex items-center justify-between text-sm">
                <span data-testid="data-range">
                  {data.numRows === 0 ? "No rows" : `Rows ${offset + 1}–${offset + data.numRows}`} of {count.data?.toLocaleString() ?? "…"}
                  {filter ? " matching" : ""}
                  {` · ${orderCaption(sort)}`}
                </span>
                <div className="flex gap-2">
                  <Button variant="secondary" disabled={offset === 0} onClick={() => address.set({ offset: Math.max(0, offset - PAGE) || undefined })}>
                    Previous
                  </Button>
                  <Button
                    variant="secondary"
                    disabled={count.data !== undefined ? offset + PAGE >= count.data : data.numRows < PAGE}
                    onClick={() => address.set({ offset: offset + PAGE })}
                  >
                    Next
                  </Button>
                </div>
              </div>
            </>
          ) : null}
        </>
      )}
    </div>
  );
}

function orderCaption(order: RowOrder | DefaultRowOrder | undefined): string {
  if (!order) return "in the order they are stored";
  if ("reason" in order) return `by ${order.column}, the table's ${order.reason === "primary key" ? "primary key" : "id"}`;
  return `by ${order.column}, ${order.ascending ? "ascending" : "descending"}`;
}
