"use client";
/**
 * Searching a table from the Data tab: nearest rows to a vector (pasted, or a row's own: "find rows like this one"),
 * or full-text search on a column, each with the tab's SQL filter and at its version or tag. Results show the
 * engine's `_distance` or `_score`; the query plan is shown on demand.
 */
import { useState } from "react";
import type { JsonField } from "@/lib/arrow-schema";
import { float32Text } from "@/lib/cell-format";
import { columnKind, indexTypeLabel } from "@/lib/index-types";
import { useExplainPlan, useTableQuery, type At } from "@/lib/queries/catalog";
import { useIndexes } from "@/lib/queries/indexes";
import { Button, Field, Select, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { ErrorBanner, Loading } from "../ui/states";
import { RowsGrid } from "./rows-grid";
import { mediaProjection, useMediaGrid } from "./use-media-grid";

export type SearchKind = "vector" | "text";

/** A query vector as typed: a JSON array or numbers separated by commas or spaces. */
export function parseVector(text: string, dimension: number | undefined): { vector: number[] } | { problem: string } {
  const body = text.trim().replace(/^\[|\]$/g, "");
  if (!body) return { problem: "type or paste a vector" };
  const parts = body.split(/[\s,]+/).filter(Boolean);
  const vector = parts.map(Number);
  const bad = parts.findIndex((p, i) => !Number.isFinite(vector[i]) || p === "");
  if (bad >= 0) return { problem: `'${parts[bad]}' is not a number` };
  if (dimension && vector.length !== dimension) return { problem: `the column's vectors have ${dimension} values; this one has ${vector.length}` };
  return { vector };
}

export function SearchPanel({
  database,
  table,
  kind,
  fields,
  at,
  version,
  filter,
  seed,
}: {
  database: string;
  table: string[];
  kind: SearchKind;
  fields: JsonField[];
  at: At;
  /** The version `at` names, which the results' row ids hold for. */
  version: number | undefined;
  filter: string;
  /** A row's vector to start from ("find rows like this one"). */
  seed: { column: string; vector: number[] } | null;
}) {
  const vectorColumns = fields.filter((f) => columnKind(f) === "vector");
  const textColumns = fields.filter((f) => columnKind(f) === "text");
  const indexes = useIndexes(database, table);
  const ftsColumns = new Set(indexes.data?.indexes.filter((i) => indexTypeLabel(i.index_type) === "FTS").flatMap((i) => i.columns));
  const projection = mediaProjection(fields, undefined);
  // Media columns are left out of the results and shown a cell at a time, from the version searched.
  const pinned = projection.media.length ? { version, columns: projection.columns, with_row_id: true } : { version: at.version, tag: at.tag };
  const vectorSearch = (vector: number[], column: string, limit: number, distance: string) => ({
    k: limit,
    filter: filter || undefined,
    prefilter: true,
    ...pinned,
    vector,
    vector_column: column,
    ...(distance ? { distance_type: distance } : {}),
  });
  const [vectorColumn, setVectorColumn] = useState(seed?.column ?? vectorColumns[0]?.name ?? "");
  // A row's vector reads at its own precision (a float32 as 0.88, not 0.8799999952316284).
  const [vectorText, setVectorText] = useState(seed ? `[${seed.vector.map(float32Text).join(", ")}]` : "");
  const [distance, setDistance] = useState("");
  const [textColumn, setTextColumn] = useState(textColumns.find((f) => ftsColumns.has(f.name))?.name ?? textColumns[0]?.name ?? "");
  const [words, setWords] = useState("");
  const [k, setK] = useState("10");
  // "Similar" on a row searches at once for the rows nearest to it.
  const [query, setQuery] = useState<Record<string, unknown> | null>(() => (seed ? vectorSearch(seed.vector, seed.column, 10, "") : null));
  const [planOpen, setPlanOpen] = useState(false);
  const explain = useExplainPlan(database, table);
  const results = useTableQuery(database, table, query);
  const media = useMediaGrid(database, table, version, projection, results.data);

  const dimension = vectorColumns.find((f) => f.name === vectorColumn)?.type.length;
  // An index on a vector column is a vector index, whose distance a search uses unless told otherwise.
  const vectorIndexed = indexes.data?.indexes.some((i) => i.columns.includes(vectorColumn));
  const parsed = kind === "vector" ? parseVector(vectorText, dimension) : null;
  const limit = Number(k);
  const problem =
    kind === "vector"
      ? vectorColumns.length === 0
        ? "this table has no vector column"
        : parsed && "problem" in parsed
          ? parsed.problem
          : null
      : textColumns.length === 0
        ? "this table has no text column"
        : !words.trim()
          ? "type words to search for"
          : null;
  const badLimit = !Number.isInteger(limit) || limit < 1 || limit > 10_000;

  const request = (): Record<string, unknown> => {
    if (kind === "vector" && parsed && "vector" in parsed) return vectorSearch(parsed.vector, vectorColumn, limit, distance);
    return {
      k: limit,
      filter: filter || undefined,
      prefilter: true,
      ...pinned,
      full_text_query: { string_query: { query: words.trim(), columns: [textColumn] } },
    };
  };

  return (
    <div className="flex flex-col gap-3">
      <form
        className="flex flex-wrap items-end gap-3"
        aria-label={kind === "vector" ? "Vector search" : "Full-text search"}
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(request());
        }}
      >
        {kind === "vector" ? (
          <>
            <Field label="Vector column" htmlFor="search-vector-column">
              <Select id="search-vector-column" value={vectorColumn} onChange={(e) => setVectorColumn(e.target.value)}>
                {vectorColumns.map((f) => (
                  <option key={f.name} value={f.name}>
                    {f.name} [{f.type.length}]
                  </option>
                ))}
              </Select>
            </Field>
            <Field label="Query vector" htmlFor="search-vector" hint="A JSON array, or numbers separated by commas">
              <TextInput id="search-vector" value={vectorText} onChange={(e) => setVectorText(e.target.value)} className="w-96 font-mono" />
            </Field>
            <Field label="Distance" htmlFor="search-distance">
              <Select id="search-distance" value={distance} onChange={(e) => setDistance(e.target.value)}>
                <option value="">{vectorIndexed ? "the index's" : "l2 (the default)"}</option>
                {["l2", "cosine", "dot", "hamming"].map((d) => (
                  <option key={d}>{d}</option>
                ))}
              </Select>
            </Field>
          </>
        ) : (
          <>
            <Field label="Text column" htmlFor="search-text-column">
              <Select id="search-text-column" value={textColumn} onChange={(e) => setTextColumn(e.target.value)}>
                {textColumns.map((f) => (
                  <option key={f.name} value={f.name}>
                    {f.name}
                    {ftsColumns.has(f.name) ? "" : " (no full-text index)"}
                  </option>
                ))}
              </Select>
            </Field>
            <Field label="Words" htmlFor="search-words">
              <TextInput id="search-words" value={words} onChange={(e) => setWords(e.target.value)} className="w-72" />
            </Field>
          </>
        )}
        <Field label="Results" htmlFor="search-k">
          <TextInput id="search-k" type="number" min={1} max={10000} value={k} onChange={(e) => setK(e.target.value)} className="w-20" />
        </Field>
        <Button type="submit" disabled={!!problem || badLimit}>
          Search
        </Button>
        <Button
          type="button"
          variant="secondary"
          disabled={!!problem || badLimit}
          onClick={() => {
            setPlanOpen(true);
            explain.mutate(request());
          }}
        >
          Explain plan
        </Button>
      </form>
      {kind === "text" && textColumn && indexes.data && !ftsColumns.has(textColumn) && (
        <p className="text-sm text-amber-700 dark:text-amber-300">Column {textColumn} has no full-text index: build one in the Indexes tab to search it.</p>
      )}
      {problem && vectorText !== "" && kind === "vector" && <p className="text-sm text-amber-700 dark:text-amber-300">{problem}</p>}
      {filter && <p className="text-xs text-slate-500">Only rows where {filter}.</p>}
      {results.isError && <ErrorBanner error={results.error} />}
      {results.isFetching && <Loading label="Searching…" />}
      {results.data && !results.isFetching && (
        <>
          <p className="text-sm" data-testid="search-count">
            {results.data.numRows === 0
              ? "No rows found"
              : `${results.data.numRows} ${kind === "vector" ? "nearest rows, nearest first" : "matching rows, best first"}`}
          </p>
          <RowsGrid data={results.data} label="Search results" media={media} />
        </>
      )}
      <Dialog wide open={planOpen} onClose={() => setPlanOpen(false)} title="Query plan">
        {explain.isPending ? (
          <Loading />
        ) : explain.isError ? (
          <ErrorBanner error={explain.error} />
        ) : (
          <pre className="max-h-96 overflow-auto whitespace-pre rounded bg-slate-100 p-3 font-mono text-xs dark:bg-slate-800" data-testid="query-plan">
            {explain.data}
          </pre>
        )}
        <div className="mt-3 flex justify-end">
          <Button variant="secondary" onClick={() => setPlanOpen(false)}>
            Close
          </Button>
        </div>
      </Dialog>
    </div>
  );
}
