"use client";
/**
 * A clicked point's nearest rows, found exactly and through the column's vector index side by side, with the share
 * of the exact ones the index found (its recall); and the same check at points spread over the map, lowest first.
 * Without an index only the exact neighbours are listed.
 */
import { cellText } from "@/lib/cell-format";
import { useRows } from "@/lib/queries/catalog";
import { useIndexCheck, type NeighbourSearch, type NeighboursQuery } from "@/lib/queries/maps";
import { Badge, Button } from "../ui/controls";
import { FramedTable, framedRowClass } from "../ui/framed-table";
import { ErrorBanner, Loading } from "../ui/states";

/** Points an index check searches from. */
export const CHECK_POINTS = 20;

export interface MapIndex {
  name: string;
  type: string;
  indexedRows: number | undefined;
  unindexedRows: number | undefined;
}

const percent = (share: number) => `${Math.round(share * 100)}%`;
const tone = (recall: number) => (recall === 1 ? "green" : recall >= 0.8 ? "amber" : "red");

export function NeighboursPanel({
  database,
  table,
  search,
  index,
  rowId,
  neighbours,
  title,
  onPick,
}: {
  database: string;
  table: string[];
  search: NeighbourSearch;
  index: MapIndex | null;
  rowId: string;
  neighbours: NeighboursQuery;
  title: string | undefined;
  onPick: (rowId: string) => void;
}) {
  const exact = neighbours.data?.exact;
  const listed = [rowId, ...(exact ?? []).map((n) => n.rowId), ...(neighbours.data?.indexed ?? []).map((n) => n.rowId)];
  const names = useRows(
    database,
    table,
    {
      version: search.version,
      columns: title ? [title] : [],
      filter: `_rowid IN (${[...new Set(listed)].join(", ")})`,
      limit: listed.length,
      offset: 0,
      withRowId: true,
    },
    Boolean(title && exact),
  );
  const nameOf = (id: string) => {
    if (!title || !names.data) return "";
    const ids = names.data.getChild("_rowid")!;
    for (let i = 0; i < names.data.numRows; i++) if (String(ids.get(i)) === id) return cellText(names.data.getChild(title)?.get(i)).short;
    return "";
  };
  const data = neighbours.data;
  const byIndex = new Set(data?.indexed?.map((n) => n.rowId));
  const inExact = new Set(exact?.map((n) => n.rowId));

  return (
    <section aria-label="Neighbours" className="flex flex-col gap-2">
      <h2 className="text-sm font-medium">
        The {search.k} rows nearest row {rowId}
        {nameOf(rowId) && ` (${nameOf(rowId)})`}, by {search.metric} distance
      </h2>
      {index ? (
        <p className="text-sm text-slate-600 dark:text-slate-300">
          Found exactly and through the {index.type} index <span className="font-mono">{index.name}</span>
          {index.indexedRows !== undefined && `, which holds ${index.indexedRows.toLocaleString()} rows`}
          {index.unindexedRows ? `; ${index.unindexedRows.toLocaleString()} rows written since are not in it and are searched exactly` : ""}.
        </p>
      ) : (
        <p className="text-sm text-slate-600 dark:text-slate-300">{search.column} has no vector index: these are exact neighbours.</p>
      )}
      {neighbours.isError ? (
        <ErrorBanner error={neighbours.error} />
      ) : !data ? (
        <Loading label="Searching…" />
      ) : (
        <>
          {data.recall !== null && (
            <p className="flex items-center gap-2 text-sm" aria-label="Recall">
              <Badge tone={tone(data.recall)}>recall {percent(data.recall)}</Badge>
              the index found {Math.round(data.recall * data.exact.length)} of the {data.exact.length} exact neighbours
            </p>
          )}
          <FramedTable
            columns={[
              { label: "#", numeric: true },
              { label: "Exact neighbour" },
              { label: "Distance", numeric: true },
              ...(data.indexed ? [{ label: "Through the index" }, { label: "Its distance", numeric: true }] : []),
            ]}
          >
            {data.exact.map((n, i) => {
              const viaIndex = data.indexed?.[i];
              return (
                <tr key={n.rowId} className={framedRowClass}>
                  <td className="px-3 py-1 text-right tabular-nums">{i + 1}</td>
                  <td className="px-3 py-1">
                    <RowLink rowId={n.rowId} name={nameOf(n.rowId)} onPick={onPick} />
                    {data.indexed && !byIndex.has(n.rowId) && <Badge tone="red">missed by the index</Badge>}
                  </td>
                  <td className="px-3 py-1 text-right font-mono tabular-nums">{n.distance.toPrecision(4)}</td>
                  {data.indexed && (
                    <>
                      <td className="px-3 py-1">
                        {viaIndex ? <RowLink rowId={viaIndex.rowId} name={nameOf(viaIndex.rowId)} onPick={onPick} /> : "—"}
                        {viaIndex && !inExact.has(viaIndex.rowId) && <Badge tone="amber">not among the exact</Badge>}
                      </td>
                      <td className="px-3 py-1 text-right font-mono tabular-nums">{viaIndex ? viaIndex.distance.toPrecision(4) : ""}</td>
                    </>
                  )}
                </tr>
              );
            })}
          </FramedTable>
        </>
      )}
    </section>
  );
}

/** The index checked against exact search at points spread over the map, the lowest recalls named. */
export function IndexCheckPanel({
  database,
  table,
  search,
  index,
  samplePoints,
  onPick,
}: {
  database: string;
  table: string[];
  search: NeighbourSearch;
  index: MapIndex;
  /** Row ids of points spread over the map. */
  samplePoints: () => string[];
  onPick: (rowId: string) => void;
}) {
  const check = useIndexCheck(database, table, search);
  return (
    <section aria-label="Index check" className="flex flex-col gap-2">
      <div className="flex flex-wrap items-center gap-3">
        <Button variant="secondary" disabled={check.isPending} onClick={() => check.mutate(samplePoints())}>
          Check the index at {CHECK_POINTS} points
        </Button>
        <span className="text-sm text-slate-600 dark:text-slate-300">
          The {index.type} index <span className="font-mono">{index.name}</span> beside exact search, {search.k} neighbours each
        </span>
        {check.isPending && <Loading label="Searching both ways…" />}
      </div>
      {check.isError && <ErrorBanner error={check.error} />}
      {check.data && (
        <div className="flex flex-col gap-1 text-sm">
          <p>
            <Badge tone={tone(check.data.mean)}>mean recall {percent(check.data.mean)}</Badge> over {check.data.points.length} points spread over the map
          </p>
          {check.data.mean < 1 && (
            <p className="flex flex-wrap items-center gap-2">
              Lowest:
              {check.data.points
                .filter((p) => p.recall < 1)
                .slice(0, 5)
                .map((p) => (
                  <span key={p.rowId}>
                    <RowLink rowId={p.rowId} name="" onPick={onPick} /> {percent(p.recall)}
                  </span>
                ))}
            </p>
          )}
        </div>
      )}
    </section>
  );
}

function RowLink({ rowId, name, onPick }: { rowId: string; name: string; onPick: (rowId: string) => void }) {
  return (
    <button type="button" className="mr-2 text-left text-indigo-700 underline-offset-2 hover:underline dark:text-indigo-300" onClick={() => onPick(rowId)}>
      {name || `row ${rowId}`}
      {name && <span className="ml-1 font-mono text-xs text-slate-500">{rowId}</span>}
    </button>
  );
}
