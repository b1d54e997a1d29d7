"use client";
/**
 * A table's Map tab: every row a point, laid out on the server from a vector column (the first layout at once, the
 * refined one when it is ready), coloured by a column with a legend whose entries select their rows; hovering a
 * point names its row (with its image, an excerpt of its text, what its audio or video is), a lasso or a legend entry selects rows, and the grid below shows exactly
 * the selected rows, page by page. A click on a point lists its nearest rows, exact and through the column's vector
 * index, with the index's recall; a filter, full-text or vector search lights its hits.
 */
import { useCallback, useEffect, useMemo, useState } from "react";
import type { JsonField } from "@/lib/arrow-schema";
import { cellText } from "@/lib/cell-format";
import { columnKind, indexTypeLabel } from "@/lib/index-types";
import { mediaColumnsOf } from "@/lib/media";
import { useRows, useTable, useVersions } from "@/lib/queries/catalog";
import { useIndexes, useIndexStats } from "@/lib/queries/indexes";
import { MAP_MAX_ASKED_ROWS, MAP_MAX_STRATA, MAP_STRATUM_QUOTA } from "@/lib/contract/maps";
import { useMapSearch, useNeighbours, usePlacedRows, useTableMap, type MapSearch, type NeighbourSearch, type TableMap } from "@/lib/queries/maps";
import { cellKey, mediaUrl, useCells } from "@/lib/queries/media";
import { Badge, Button, Field, Select } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { fromPicker, pickerValue, refOf, VersionPicker } from "../table/version-picker";
import { useTableAddress } from "../table/use-table-address";
import { formatBytes } from "../table/format";
import { RowsGrid } from "../table/rows-grid";
import { mediaProjection, useMediaGrid } from "../table/use-media-grid";
import { categoriesOf, PALETTE } from "./categories";
import { CHANGE_COLORS, compareVersions, type Comparison } from "./compare";
import { MapSearchForm } from "./map-search";
import { CHECK_POINTS, IndexCheckPanel, NeighboursPanel, type MapIndex } from "./neighbours-panel";
import { prepareSurface } from "./point-map";
import { withPlaced } from "./sample";
import { ScatterPlot } from "./scatter-plot";

const PAGE = 50;
/** Neighbours listed for a clicked point. */
const NEIGHBOURS = 10;

const isMappable = (f: JsonField) => f.type.type === "fixed_size_list" && /^(halffloat|float|double)$/.test(f.type.fields?.[0]?.type.type ?? "");
const SHOWABLE = /^(u?int(8|16|32|64)|halffloat|float|double|bool|string|large_string|date.*|timestamp.*|dictionary)$/;
const isShowable = (f: JsonField) => SHOWABLE.test(f.type.type);
/** What names a row on the map: a text column called like a name, else the first text column. */
const titleColumn = (fields: JsonField[]) => {
  const text = fields.filter((f) => columnKind(f) === "text").map((f) => f.name);
  return text.find((n) => /^(name|title|caption|text|label|path|file(name)?)$/i.test(n)) ?? text[0];
};
/** A row's longer text, shown in part beside its name: a text column called like one, other than the name. */
const excerptColumn = (fields: JsonField[], title: string | undefined) =>
  fields
    .filter((f) => columnKind(f) === "text" && f.name !== title)
    .map((f) => f.name)
    .find((n) => /^(text|content|body|caption|description|abstract|summary|transcript|document|chunk|passage)$/i.test(n));
/** Characters of a hovered row's name and of its excerpt shown. */
const NAME_CHARS = 120;
const EXCERPT_CHARS = 280;
const cutAt = (text: string, chars: number) => (text.length > chars ? `${text.slice(0, chars)}…` : text);

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
  // Only the colour column comes with the points: a row's name, text and media are read when it is hovered.
  const shown = colorBy ? [colorBy] : [];
  const version = described.data?.version;
  const versions = useVersions(database, table);
  const listed = versions.data?.pages.flatMap((p) => p.versions.map((v) => v.version)) ?? [];
  // Two versions in one map: this one's rows placed onto an earlier one's layout.
  // The address's `compare` is the schema tab's too (`v:3`); a map compares versions only.
  const compare = listed.find((v) => v === Number(fromPicker(address.get("compare") ?? "").version) && version !== undefined && v < version);
  const requested = Boolean(column) && version !== undefined;
  const map = useTableMap(
    database,
    table,
    { column, version, metric, columns: compare === undefined ? shown : [], ...(compare !== undefined ? { placed_on_version: compare } : {}) },
    requested,
  );
  useEffect(() => {
    if (!requested) return;
    // The plot's surface is made while the map is on its way, once the request has gone.
    const soon = setTimeout(() => {
      try {
        prepareSurface();
      } catch {
        // The plot says why it cannot draw.
      }
    });
    return () => clearTimeout(soon);
  }, [requested]);
  const placedReady = compare !== undefined && map.data?.facts.placed_on === compare && !map.data.facts.refining;
  const base = useTableMap(database, table, { column, version: compare, metric, columns: [] }, placedReady);
  const comparison = useMemo(() => (placedReady && map.data && base.data ? compareVersions(map.data, base.data) : null), [placedReady, map.data, base.data]);
  const indexes = useIndexes(database, table);
  const indexed = indexes.data?.indexes.find((i) => column && i.columns.includes(column));
  const stats = useIndexStats(database, table, indexed?.index_name ?? "", Boolean(indexed));
  const index: (MapIndex & { metric: string }) | null =
    indexed && stats.data
      ? {
          name: indexed.index_name,
          type: indexTypeLabel(indexed.index_type),
          indexedRows: stats.data.num_indexed_rows,
          unindexedRows: stats.data.num_unindexed_rows,
          metric: stats.data.distance_type?.toLowerCase() ?? "l2",
        }
      : null;

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
        <Field label="Compare with" htmlFor="map-compare">
          <Select id="map-compare" value={compare ?? ""} onChange={(e) => address.set({ compare: e.target.value ? `v:${e.target.value}` : undefined })}>
            <option value="">no other version</option>
            {listed
              .filter((v) => version !== undefined && v < version)
              .map((v) => (
                <option key={v} value={v}>
                  version {v}
                </option>
              ))}
          </Select>
        </Field>
        {compare !== undefined && version !== undefined && (
          <VersionSlider
            versions={listed.filter((v) => v >= compare).sort((a, b) => a - b)}
            value={version}
            onChange={(v) => address.set({ version: String(v), tag: undefined })}
          />
        )}
        <Field label="Colour by" htmlFor="map-color">
          <Select
            id="map-color"
            value={compare === undefined ? (colorBy ?? "") : ""}
            disabled={compare !== undefined}
            onChange={(e) => address.set({ color: e.target.value || undefined })}
          >
            <option value="">{compare === undefined ? "nothing" : "what changed"}</option>
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
      {map.isError || base.isError ? (
        <ErrorBanner error={map.error ?? base.error} />
      ) : !map.data ? (
        <Loading label="Laying out the rows…" />
      ) : compare !== undefined && !comparison ? (
        <Loading label={`Laying out version ${compare}, then placing version ${version}'s rows onto it…`} />
      ) : map.data.facts.points === 0 && !comparison ? (
        <Empty title="Nothing to map">
          {map.data.facts.without_vector
            ? `Every row's ${map.data.facts.column} is null (${map.data.facts.without_vector.toLocaleString()} rows): there is no vector to lay out.`
            : "This version of the table has no rows."}
        </Empty>
      ) : (
        <MapView
          key={`${map.data.facts.version}:${map.data.facts.column}:${metric}:${compare}:${map.data.facts.stage === "preview" ? "preview" : "every row"}`}
          map={map.data}
          comparison={comparison}
          database={database}
          table={table}
          colorBy={colorBy}
          title={title}
          excerpt={excerptColumn(fields, title)}
          media={mediaColumnsOf(fields)[0]}
          fields={fields}
          gridColumns={fields.filter((f) => !isMappable(f)).map((f) => f.name)}
          vectorField={vectors.find((f) => f.name === map.data.facts.column)!}
          textColumns={fields.filter((f) => columnKind(f) === "text").map((f) => f.name)}
          metric={metric}
          index={index}
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
  excerpt,
  media,
  fields,
  gridColumns,
  vectorField,
  textColumns,
  metric,
  index,
  comparison,
}: {
  map: TableMap;
  database: string;
  table: string[];
  colorBy: string | undefined;
  title: string | undefined;
  excerpt: string | undefined;
  /** The first binary column: what a hovered row's value holds is shown. */
  media: string | undefined;
  fields: JsonField[];
  gridColumns: string[];
  vectorField: JsonField;
  textColumns: string[];
  metric: string;
  index: (MapIndex & { metric: string }) | null;
  /** Two versions in one map: the points are this version's rows and the earlier one's deleted rows. */
  comparison: Comparison | null;
}) {
  const { facts } = map;
  const [selected, setSelected] = useState<Selection | null>(null);
  // A sample's map once refined: the colour column's rarer values, and the rows listed that the sample left out, are
  // placed onto its layout.
  const placeable = facts.sampled && !comparison && facts.stage === "refined";
  const placing = { column: facts.column, version: facts.version, metric: facts.metric, columns: colorBy ? [colorBy] : [] };
  const strata = usePlacedRows(database, table, placeable && colorBy ? { ...placing, stratify_by: colorBy } : null);
  const stratified = useMemo(() => withPlaced(map, [strata.data]), [map, strata.data]);
  const stratifiedIndexOf = useMemo(() => rowIndex(stratified.rowIds), [stratified.rowIds]);

  const neighbourSearch: NeighbourSearch = {
    version: facts.version,
    column: facts.column,
    metric: index?.metric ?? metric,
    indexed: Boolean(index),
    k: NEIGHBOURS,
  };
  const point = selected?.by === "point" ? selected.rowId : null;
  const neighbours = useNeighbours(database, table, neighbourSearch, point);
  const hits = useMapSearch(database, table, facts.version, facts.rows, selected?.by === "search" ? selected.search : null);
  const missing = useMemo(() => {
    if (!placeable) return [];
    const wanted =
      selected?.by === "search"
        ? (hits.data ?? [])
        : point !== null
          ? [...(neighbours.data?.exact ?? []), ...(neighbours.data?.indexed ?? [])].map((n) => n.rowId)
          : [];
    return [...new Set(wanted)].filter((rowId) => stratifiedIndexOf(rowId) < 0).slice(0, MAP_MAX_ASKED_ROWS);
  }, [placeable, selected, hits.data, point, neighbours.data, stratifiedIndexOf]);
  const asked = usePlacedRows(database, table, missing.length ? { ...placing, row_ids: missing.map(Number) } : null);
  const plotted = useMemo(() => withPlaced(stratified, [asked.data]), [stratified, asked.data]);
  const drawn = comparison ?? plotted;
  const categories = useMemo(() => comparison?.categories ?? categoriesOf(plotted.columns, colorBy, plotted.x.length), [comparison, plotted, colorBy]);
  const points = useMemo(() => ({ x: drawn.x, y: drawn.y, category: categories.of }), [drawn.x, drawn.y, categories.of]);
  // Kept between renders: new colours upload every point again (half a second at 100,000 on a software renderer).
  const colors = useMemo(() => (comparison ? CHANGE_COLORS : PALETTE.slice(0, Math.max(1, categories.labels.length))), [comparison, categories.labels.length]);
  const deletedFrom = comparison?.deletedFrom ?? drawn.x.length;
  const versionOf = (i: number) => (i >= deletedFrom ? facts.placed_on! : facts.version);
  const [hovered, setHovered] = useState<number | null>(null);
  const [lasso, setLasso] = useState(false);
  const indexOf = useMemo(() => rowIndex(drawn.rowIds), [drawn.rowIds]);
  const rowIdOf = (i: number) => String(drawn.rowIds[i]);

  // What the grid lists and the map lights: the rows selected, a search's hits, or a clicked point with its exact
  // neighbours (the hits and neighbours lit where they are on the map).
  const listed = useMemo(() => {
    if (!selected) return null;
    if (selected.by === "search") return hits.data ?? null;
    if (selected.by === "point") return [selected.rowId, ...(neighbours.data?.exact.map((n) => n.rowId) ?? [])];
    return selected.indices.filter((i) => i < deletedFrom).map((i) => String(drawn.rowIds[i]));
  }, [selected, hits.data, neighbours.data, drawn.rowIds, deletedFrom]);
  // The earlier version's deleted rows among those selected, read at that version.
  const gone = selected && (selected.by === "lasso" || selected.by === "legend") ? selected.indices.filter((i) => i >= deletedFrom).map(rowIdOf) : [];
  const lit = useMemo(() => {
    if (!selected || !listed) return null;
    return selected.by === "lasso" || selected.by === "legend" ? selected.indices : listed.map(indexOf).filter((i) => i >= 0);
  }, [selected, listed, indexOf]);
  const pickCategory = (c: number) => {
    const indices: number[] = [];
    for (let i = 0; i < categories.of.length; i++) if (categories.of[i] === c) indices.push(i);
    setSelected({ by: "legend", category: c, indices });
  };
  const pickRow = useCallback(
    (rowId: string) => {
      const i = indexOf(rowId);
      if (i >= 0) setSelected({ by: "point", rowId });
    },
    [indexOf],
  );
  const activeCategory = selected?.by === "legend" ? selected.category : null;
  const value = (column: string | undefined, i: number) => (column ? cellText(plotted.columns.getChild(column)?.get(i)).short : "");
  const samplePoints = () =>
    Array.from({ length: Math.min(CHECK_POINTS, facts.points) }, (_, j) =>
      rowIdOf(Math.floor(((j + 0.5) * facts.points) / Math.min(CHECK_POINTS, facts.points))),
    );
  return (
    <>
      <p className="flex flex-wrap items-center gap-2 text-sm text-slate-600 dark:text-slate-300" aria-live="polite">
        <span>
          {facts.points.toLocaleString()} {facts.points === 1 ? "point" : "points"} of version {facts.version}, by {facts.column} ({facts.dimensions}{" "}
          dimensions)
        </span>
        {facts.placed_on !== undefined ? (
          <Badge tone="indigo">on version {facts.placed_on}&apos;s layout</Badge>
        ) : facts.stage === "preview" ? (
          <Badge tone="amber">
            a first look at a sample of {facts.points.toLocaleString()} of {facts.rows.toLocaleString()} rows: every row follows…
          </Badge>
        ) : facts.stage === "refined" ? (
          <Badge tone="green">refined layout (UMAP)</Badge>
        ) : (
          <Badge tone="amber">first layout (principal components): refining…</Badge>
        )}
        {facts.sampled && facts.stage !== "preview" && (
          <Badge tone="indigo">
            a random sample of {facts.points.toLocaleString()} of {facts.rows.toLocaleString()} rows
            {strata.data?.facts.topped_up
              ? `, with ${strata.data.rowIds.length.toLocaleString()} more rows of ${colorBy}'s rarer values placed onto it (at least ${MAP_STRATUM_QUOTA} rows of each value, or all it has)`
              : ""}
          </Badge>
        )}
        {facts.sampled && colorBy && !comparison && facts.stage !== "refined" && (
          <Badge>{`rows of ${colorBy}'s rarer values are placed onto the sample once it is refined`}</Badge>
        )}
        {strata.isFetching && !strata.data && <Badge>{`placing rows of ${colorBy}'s rarer values onto the sample…`}</Badge>}
        {strata.data?.facts.too_many_values && <Badge>{`not stratified by ${colorBy}: more than ${MAP_MAX_STRATA.toLocaleString()} distinct values`}</Badge>}
        {strata.isError && <Badge tone="red">{`the rarer values of ${colorBy} could not be placed: ${strata.error.message}`}</Badge>}
        {facts.without_vector > 0 && <Badge>{facts.without_vector.toLocaleString()} rows without a vector, not shown</Badge>}
      </p>
      <MapSearchForm
        textColumns={textColumns}
        vectorColumn={vectorField}
        metric={index?.metric ?? metric}
        searching={hits.isFetching}
        onSearch={(search) => setSelected(search ? { by: "search", search } : null)}
      />
      <div className="flex flex-col gap-3 lg:flex-row">
        <div className="relative h-[520px] min-w-0 flex-1 rounded border border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
          <ScatterPlot
            points={points}
            colors={colors}
            selected={lit}
            trails={comparison?.trails}
            lasso={lasso}
            onSelect={(indices) =>
              setSelected(!indices?.length ? null : indices.length === 1 && !lasso ? { by: "point", rowId: rowIdOf(indices[0]) } : { by: "lasso", indices })
            }
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
          {hovered !== null && hovered < deletedFrom && (
            <HoverCard
              database={database}
              table={table}
              version={versionOf(hovered)}
              rowId={rowIdOf(hovered)}
              title={title}
              excerpt={excerpt}
              media={media}
              color={colorBy ? { column: colorBy, value: value(colorBy, hovered) } : undefined}
              placed={!comparison && hovered >= facts.points}
            />
          )}
        </div>
        <Legend
          labels={categories.labels}
          counts={categories.counts}
          colors={colors}
          active={activeCategory}
          onPick={(c) => (c === activeCategory ? setSelected(null) : pickCategory(c))}
          heading={comparison ? `Since version ${facts.placed_on}` : colorBy}
        />
      </div>
      {index && <IndexCheckPanel database={database} table={table} search={neighbourSearch} index={index} samplePoints={samplePoints} onPick={pickRow} />}
      {point !== null && (
        <NeighboursPanel
          database={database}
          table={table}
          search={neighbourSearch}
          index={index}
          rowId={point}
          neighbours={neighbours}
          title={title}
          onPick={pickRow}
        />
      )}
      {asked.isError && <ErrorBanner error={asked.error} />}
      {selected?.by === "search" && hits.isError ? (
        <ErrorBanner error={hits.error} />
      ) : selected?.by === "search" && hits.data && lit ? (
        <p className="text-sm text-slate-600 dark:text-slate-300" aria-label="Search hits">
          {hits.data.length.toLocaleString()} {hits.data.length === 1 ? "row" : "rows"} found, {lit.length.toLocaleString()} of them on the map
          {asked.data?.rowIds.length ? `, ${asked.data.rowIds.length.toLocaleString()} of those placed onto the sample's layout` : ""}
          {hits.data.length > lit.length &&
            (missing.length && asked.isFetching
              ? " (the others, left out of the sample, are being placed onto it)"
              : facts.sampled && facts.stage !== "refined"
                ? " (the others, left out of the sample, are placed once it is refined)"
                : " (the others have no vector)")}
          .
        </p>
      ) : null}
      {gone.length > 0 && (
        <SelectedRows
          key={`gone:${JSON.stringify(selected)}`}
          database={database}
          table={table}
          version={facts.placed_on!}
          rowIds={gone}
          fields={fields}
          columns={gridColumns}
          heading={`deleted since version ${facts.placed_on}, as it had them`}
          onClear={() => setSelected(null)}
        />
      )}
      {listed && (listed.length > 0 || gone.length === 0) ? (
        <SelectedRows
          key={JSON.stringify(selected) + listed.length}
          database={database}
          table={table}
          version={facts.version}
          rowIds={listed}
          fields={fields}
          columns={gridColumns}
          heading={selected?.by === "point" ? "the point and its exact neighbours" : undefined}
          onClear={() => setSelected(null)}
        />
      ) : gone.length > 0 ? null : selected?.by === "search" && hits.isFetching ? (
        <Loading label="Searching…" />
      ) : (
        <p className="text-sm text-slate-500">
          Lasso points (or shift-drag), pick a legend entry or search, to see their rows here; click a point for its neighbours.
        </p>
      )}
    </>
  );
}

type Selection =
  | { by: "lasso"; indices: number[] }
  | { by: "legend"; category: number; indices: number[] }
  | { by: "point"; rowId: string }
  | { by: "search"; search: MapSearch };

/** Each point's index by its row id, made on first use (a search or a click), not when the map opens. */
function rowIndex(rowIds: BigUint64Array): (rowId: string) => number {
  let byId: Map<string, number> | null = null;
  return (rowId) => {
    if (!byId) {
      byId = new Map();
      for (let i = 0; i < rowIds.length; i++) byId.set(String(rowIds[i]), i);
    }
    return byId.get(rowId) ?? -1;
  };
}

/**
 * The hovered point's row: at once its colour value and row id, then its name, an excerpt of its text, and its media
 * as they are read: an image's thumbnail; for audio or video what it is, to be played in the grid once the point is
 * clicked (a card that follows the cursor is no place for a player).
 */
function HoverCard({
  database,
  table,
  version,
  rowId,
  title,
  excerpt,
  media,
  color,
  placed,
}: {
  database: string;
  table: string[];
  version: number;
  rowId: string;
  title: string | undefined;
  excerpt: string | undefined;
  media: string | undefined;
  color: { column: string; value: string } | undefined;
  /** Left out of the map's sample, placed onto its layout. */
  placed: boolean;
}) {
  const texts = [title, excerpt].filter((c): c is string => Boolean(c));
  const read = useRows(database, table, { version, columns: texts, filter: `_rowid = ${rowId}`, limit: 1, offset: 0 }, texts.length > 0);
  const text = (column: string | undefined) => (column && read.data?.numRows ? cellText(read.data.getChild(column)?.get(0)).full : null);
  const name = text(title);
  const passage = text(excerpt);
  const cells = useCells(database, table, version, media ? [media] : [], [rowId]);
  const held = media ? cells.data?.get(cellKey(rowId, media)) : undefined;
  const kind = held?.size ? held.media?.kind : undefined;
  return (
    <div
      role="tooltip"
      className="pointer-events-none absolute right-2 bottom-2 z-10 max-w-xs rounded border border-slate-200 bg-white/95 p-2 text-xs shadow dark:border-slate-700 dark:bg-slate-900/95"
    >
      {media && kind === "image" && (
        // eslint-disable-next-line @next/next/no-img-element
        <img alt="" className="mb-1 max-h-24" src={mediaUrl({ database, table, version, column: media, rowId }, { thumbnail: 96 })} />
      )}
      {name !== null && <p className="font-medium">{cutAt(name, NAME_CHARS)}</p>}
      {passage !== null && <p className="mt-1 text-slate-700 dark:text-slate-300">{cutAt(passage, EXCERPT_CHARS)}</p>}
      {held?.size && (kind === "audio" || kind === "video") ? (
        <p className="mt-1">
          {kind === "audio" ? "Audio" : "Video"} ({held.media!.mime}, {formatBytes(held.size)}): click the point to play it in the rows below
        </p>
      ) : null}
      {color && (
        <p>
          {color.column}: {color.value}
        </p>
      )}
      {placed && <p className="text-slate-500">not in the sample: placed among its nearest rows</p>}
      <p className="font-mono text-slate-500">_rowid {rowId}</p>
    </div>
  );
}

function Legend({
  labels,
  counts,
  colors,
  active,
  onPick,
  heading,
}: {
  labels: string[];
  counts: number[];
  colors: string[];
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
              <span aria-hidden className="inline-block h-3 w-3 shrink-0 rounded-full" style={{ background: colors[c] }} />
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
  fields,
  columns,
  heading,
  onClear,
}: {
  database: string;
  table: string[];
  version: number;
  rowIds: string[];
  fields: JsonField[];
  /** The columns shown, binary ones among them: what each of their cells holds is read a page at a time. */
  columns: string[];
  /** What the rows are, when more than "selected". */
  heading?: string;
  onClear: () => void;
}) {
  const [page, setPage] = useState(0);
  const ids = rowIds.slice(page * PAGE, (page + 1) * PAGE);
  const projection = mediaProjection(fields, columns);
  const rows = useRows(database, table, {
    version,
    columns: projection.columns ?? columns,
    filter: `_rowid IN (${ids.join(", ")})`,
    limit: PAGE,
    offset: 0,
    withRowId: true,
  });
  const media = useMediaGrid(database, table, version, projection, rows.data);
  const pages = Math.ceil(rowIds.length / PAGE);
  return (
    <section aria-label="Selected rows" className="flex flex-col gap-2">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h2 className="font-medium">
          {rowIds.length.toLocaleString()} {rowIds.length === 1 ? "row" : "rows"} selected{heading && `: ${heading}`}
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
      {rows.isError ? <ErrorBanner error={rows.error} /> : rows.data ? <RowsGrid data={rows.data} label="Selected rows" media={media} /> : <Loading />}
    </section>
  );
}

/** Steps through the versions from the one compared with to the latest, each placed onto that one's layout. */
function VersionSlider({ versions, value, onChange }: { versions: number[]; value: number; onChange: (version: number) => void }) {
  const at = Math.max(0, versions.indexOf(value));
  return (
    <label className="flex items-center gap-2 text-sm" htmlFor="map-version-slider">
      <span className="text-slate-600 dark:text-slate-300">Version</span>
      <input
        id="map-version-slider"
        type="range"
        min={0}
        max={versions.length - 1}
        step={1}
        value={at}
        aria-valuetext={`version ${versions[at]}`}
        onChange={(e) => onChange(versions[Number(e.target.value)])}
        className="w-40 accent-indigo-600"
      />
      <span className="font-mono tabular-nums">{versions[at]}</span>
    </label>
  );
}
