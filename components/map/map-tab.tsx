"use client";
/**
 * A table's Map tab: every row a point, laid out on the server from a vector column (the first layout at once, the
 * refined one when it is ready), coloured by a column with a legend whose entries select their rows; hovering a
 * point names its row (and shows its image), a lasso or a legend entry selects rows, and the grid below shows exactly
 * the selected rows, page by page.
 */
import { useMemo, useState } from "react";
import type { JsonField } from "@/lib/arrow-schema";
import { cellText } from "@/lib/cell-format";
import { mediaColumnsOf } from "@/lib/media";
import { useRows, useTable } from "@/lib/queries/catalog";
import { useTableMap, type TableMap } from "@/lib/queries/maps";
import { mediaUrl } from "@/lib/queries/media";
import { Badge, Button, Field, Select } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { fromPicker, pickerValue, refOf, VersionPicker } from "../table/version-picker";
import { useTableAddress } from "../table/use-table-address";
import { RowsGrid } from "../table/rows-grid";
import { categoriesOf, PALETTE } from "./categories";
import { ScatterPlot } from "./scatter-plot";

const PAGE = 50;

const isMappable = (f: JsonField) => f.type.type === "fixed_size_list" && /^(halffloat|float|double)$/.test(f.type.fields?.[0]?.type.type ?? "");
const SHOWABLE = /^(u?int(8|16|32|64)|halffloat|float|double|bool|string|large_string|date.*|timestamp.*|dictionary)$/;
const isShowable = (f: JsonField) => SHOWABLE.test(f.type.type);
/** What names a row on the map: a text column called like a name, else the first text column. */
const titleColumn = (fields: JsonField[]) => {
  const text = fields.filter((f) => f.type.type === "string" || f.type.type === "large_string").map((f) => f.name);
  return text.find((n) => /^(name|title|caption|text|label|path|file(name)?)$/i.test(n)) ?? text[0];
};

export function MapTab({ database, table }: { database: string; table: string[] }) {
  const address = useTableAddress();
  const at = refOf({ version: address.get("version"), tag: address.get("tag") });
  const described = useTable(database, table, at);
  const fields = useMemo(() => described.data?.schema?.fields ?? [], [described.data]);
  const vectors = fields.filter(isMappable);
  const showable = fields.filter(isShowable);
  const column = vectors.find((f) => f.name === address.get("vector"))?.name ?? vectors[0]?.name;
  const colorBy = showable.find((f) => f.name === address.get("color"))?.name;
  const metric = address.get("metric") === "cosine" ? "cosine" : "l2";
  const title = titleColumn(fields);
  // Only the colour column comes with the points: a row's name and image are read when it is hovered.
  const shown = colorBy ? [colorBy] : [];
  const version = described.data?.version;
  const map = useTableMap(database, table, { column, version, metric, columns: shown }, Boolean(column) && version !== undefined);

  if (described.isPending) return <Loading />;
  if (described.data?.is_only_declared) return <Empty title="No data yet">This table is declared only: it has no rows to map.</Empty>;
  if (!vectors.length)
    return (
      <Empty title="No vector column">A map lays rows out by a vector column (a fixed-size list of floats, such as an embedding). This table has none.</Empty>
    );
  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap items-end gap-4">
        <VersionPicker
          database={database}
          table={table}
          id="map-at"
          label="Rows at"
          value={pickerValue(address.get("version"), address.get("tag"))}
          onChange={(v) => address.set(fromPicker(v))}
        />
        {vectors.length > 1 && (
          <Field label="Vector column" htmlFor="map-vector">
            <Select id="map-vector" value={column} onChange={(e) => address.set({ vector: e.target.value })}>
              {vectors.map((f) => (
                <option key={f.name}>{f.name}</option>
              ))}
            </Select>
          </Field>
        )}
        <Field label="Colour by" htmlFor="map-color">
          <Select id="map-color" value={colorBy ?? ""} onChange={(e) => address.set({ color: e.target.value || undefined })}>
            <option value="">nothing</option>
            {showable.map((f) => (
              <option key={f.name}>{f.name}</option>
            ))}
          </Select>
        </Field>
        <Field label="Near by" htmlFor="map-metric">
          <Select id="map-metric" value={metric} onChange={(e) => address.set({ metric: e.target.value === "cosine" ? "cosine" : undefined })}>
            <option value="l2">Euclidean distance</option>
            <option value="cosine">angle (cosine)</option>
          </Select>
        </Field>
      </div>
      {map.isError ? (
        <ErrorBanner error={map.error} />
      ) : !map.data ? (
        <Loading label="Laying out the rows…" />
      ) : map.data.facts.points === 0 ? (
        <Empty title="Nothing to map">
          {map.data.facts.without_vector
            ? `Every row's ${map.data.facts.column} is null (${map.data.facts.without_vector.toLocaleString()} rows): there is no vector to lay out.`
            : "This version of the table has no rows."}
        </Empty>
      ) : (
        <MapView
          key={`${map.data.facts.version}:${map.data.facts.column}:${metric}`}
          map={map.data}
          database={database}
          table={table}
          colorBy={colorBy}
          title={title}
          image={mediaColumnsOf(fields)[0]}
          gridColumns={fields.filter((f) => !isMappable(f) && !mediaColumnsOf(fields).includes(f.name)).map((f) => f.name)}
        />
      )}
    </div>
  );
}

function MapView({
  map,
  database,
  table,
  colorBy,
  title,
  image,
  gridColumns,
}: {
  map: TableMap;
  database: string;
  table: string[];
  colorBy: string | undefined;
  title: string | undefined;
  image: string | undefined;
  gridColumns: string[];
}) {
  const { facts } = map;
  const categories = useMemo(() => categoriesOf(map.columns, colorBy, facts.points), [map.columns, colorBy, facts.points]);
  const points = useMemo(() => ({ x: map.x, y: map.y, category: categories.of }), [map.x, map.y, categories.of]);
  // Kept between renders: new colours upload every point again (half a second at 100,000 on a software renderer).
  const colors = useMemo(() => PALETTE.slice(0, Math.max(1, categories.labels.length)), [categories.labels.length]);
  const [selected, setSelected] = useState<{ indices: number[]; by: string } | null>(null);
  const [hovered, setHovered] = useState<number | null>(null);
  const [lasso, setLasso] = useState(false);
  const pickCategory = (c: number) => {
    const indices: number[] = [];
    for (let i = 0; i < categories.of.length; i++) if (categories.of[i] === c) indices.push(i);
    setSelected({ indices, by: `legend:${c}` });
  };
  const activeCategory = selected?.by.startsWith("legend:") ? Number(selected.by.slice(7)) : null;
  const value = (column: string | undefined, i: number) => (column ? cellText(map.columns.getChild(column)?.get(i)).short : "");
  return (
    <>
      <p className="flex flex-wrap items-center gap-2 text-sm text-slate-600 dark:text-slate-300" aria-live="polite">
        <span>
          {facts.points.toLocaleString()} {facts.points === 1 ? "point" : "points"} of version {facts.version}, by {facts.column} ({facts.dimensions}{" "}
          dimensions)
        </span>
        {facts.stage === "refined" ? (
          <Badge tone="green">refined layout (UMAP)</Badge>
        ) : (
          <Badge tone="amber">first layout (principal components): refining…</Badge>
        )}
        {facts.sampled && <Badge tone="indigo">an even sample of {facts.rows.toLocaleString()} rows</Badge>}
        {facts.without_vector > 0 && <Badge>{facts.without_vector.toLocaleString()} rows without a vector, not shown</Badge>}
      </p>
      <div className="flex flex-col gap-3 lg:flex-row">
        <div className="relative h-[520px] min-w-0 flex-1 rounded border border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
          <ScatterPlot
            points={points}
            colors={colors}
            selected={selected?.indices ?? null}
            lasso={lasso}
            onSelect={(indices) => setSelected(indices && indices.length ? { indices, by: "lasso" } : null)}
            onHover={setHovered}
          />
          <div className="absolute top-2 left-2 z-10 flex gap-1">
            <Button variant={lasso ? "ghost" : "secondary"} aria-pressed={!lasso} onClick={() => setLasso(false)}>
              Pan
            </Button>
            <Button variant={lasso ? "secondary" : "ghost"} aria-pressed={lasso} onClick={() => setLasso(true)}>
              Lasso
            </Button>
          </div>
          {hovered !== null && hovered < facts.points && (
            <HoverCard
              database={database}
              table={table}
              version={facts.version}
              rowId={String(map.rowIds[hovered])}
              title={title}
              image={image}
              color={colorBy ? { column: colorBy, value: value(colorBy, hovered) } : undefined}
            />
          )}
        </div>
        <Legend
          labels={categories.labels}
          counts={categories.counts}
          active={activeCategory}
          onPick={(c) => (c === activeCategory ? setSelected(null) : pickCategory(c))}
          heading={colorBy}
        />
      </div>
      {selected ? (
        <SelectedRows
          key={selected.by + selected.indices.length}
          database={database}
          table={table}
          version={facts.version}
          rowIds={selected.indices.map((i) => String(map.rowIds[i]))}
          columns={gridColumns}
          onClear={() => setSelected(null)}
        />
      ) : (
        <p className="text-sm text-slate-500">Lasso points (or shift-drag), or pick a legend entry, to see their rows here.</p>
      )}
    </>
  );
}

/** The hovered point's row: at once its colour value and row id, then its name and image as they are read. */
function HoverCard({
  database,
  table,
  version,
  rowId,
  title,
  image,
  color,
}: {
  database: string;
  table: string[];
  version: number;
  rowId: string;
  title: string | undefined;
  image: string | undefined;
  color: { column: string; value: string } | undefined;
}) {
  const named = useRows(database, table, { version, columns: title ? [title] : [], filter: `_rowid = ${rowId}`, limit: 1, offset: 0 }, Boolean(title));
  const name = title && named.data?.numRows ? cellText(named.data.getChild(title)?.get(0)).short : null;
  return (
    <div
      role="tooltip"
      className="pointer-events-none absolute right-2 bottom-2 z-10 max-w-xs rounded border border-slate-200 bg-white/95 p-2 text-xs shadow dark:border-slate-700 dark:bg-slate-900/95"
    >
      {image && (
        // eslint-disable-next-line @next/next/no-img-element
        <img
          alt=""
          className="mb-1 max-h-24"
          src={mediaUrl({ database, table, version, column: image, rowId }, { thumbnail: 96 })}
          onError={(e) => (e.currentTarget.style.display = "none")}
        />
      )}
      {name !== null && <p className="font-medium">{name}</p>}
      {color && (
        <p>
          {color.column}: {color.value}
        </p>
      )}
      <p className="font-mono text-slate-500">_rowid {rowId}</p>
    </div>
  );
}

function Legend({
  labels,
  counts,
  active,
  onPick,
  heading,
}: {
  labels: string[];
  counts: number[];
  active: number | null;
  onPick: (category: number) => void;
  heading: string | undefined;
}) {
  return (
    <section aria-label="Legend" className="w-full shrink-0 lg:w-56">
      <h2 className="mb-1 text-xs font-medium text-slate-600 dark:text-slate-300">{heading ?? "Colour"}</h2>
      <ul className="flex flex-col gap-0.5">
        {labels.map((label, c) => (
          <li key={label}>
            <button
              type="button"
              aria-pressed={active === c}
              onClick={() => onPick(c)}
              className={`flex w-full items-center gap-2 rounded px-1.5 py-1 text-left text-sm hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:hover:bg-slate-800 ${
                active === c ? "bg-indigo-50 font-medium dark:bg-indigo-950" : ""
              }`}
            >
              <span aria-hidden className="inline-block h-3 w-3 shrink-0 rounded-full" style={{ background: PALETTE[c] }} />
              <span className="min-w-0 flex-1 truncate">{label}</span>
              <span className="text-xs text-slate-500 tabular-nums">{counts[c].toLocaleString()}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function SelectedRows({
  database,
  table,
  version,
  rowIds,
  columns,
  onClear,
}: {
  database: string;
  table: string[];
  version: number;
  rowIds: string[];
  columns: string[];
  onClear: () => void;
}) {
  const [page, setPage] = useState(0);
  const ids = rowIds.slice(page * PAGE, (page + 1) * PAGE);
  const rows = useRows(database, table, { version, columns, filter: `_rowid IN (${ids.join(", ")})`, limit: PAGE, offset: 0, withRowId: true });
  const pages = Math.ceil(rowIds.length / PAGE);
  return (
    <section aria-label="Selected rows" className="flex flex-col gap-2">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h2 className="font-medium">
          {rowIds.length.toLocaleString()} {rowIds.length === 1 ? "row" : "rows"} selected
        </h2>
        {pages > 1 && (
          <>
            <Button variant="ghost" disabled={page === 0} onClick={() => setPage(page - 1)}>
              Previous
            </Button>
            <span className="text-slate-500">
              page {page + 1} of {pages}
            </span>
            <Button variant="ghost" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
              Next
            </Button>
          </>
        )}
        <Button variant="ghost" onClick={onClear}>
          Clear selection
        </Button>
      </div>
      {rows.isError ? <ErrorBanner error={rows.error} /> : rows.data ? <RowsGrid data={rows.data} label="Selected rows" /> : <Loading />}
    </section>
  );
}
