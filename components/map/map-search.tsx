"use client";
/**
 * Searching from the map: a SQL filter's every match, or a full-text or vector search's best rows, at the map's
 * version; the parent lights the hits on the map and shows their rows.
 */
import { useState } from "react";
import type { JsonField } from "@/lib/arrow-schema";
import type { MapSearch } from "@/lib/queries/maps";
import { Button, Field, Select, TextInput } from "../ui/controls";
import { parseVector } from "../table/search-panel";

const KINDS = { filter: "SQL filter", text: "words (full text)", vector: "nearest to a vector" } as const;

export function MapSearchForm({
  textColumns,
  vectorColumn,
  metric,
  searching,
  onSearch,
}: {
  textColumns: string[];
  vectorColumn: JsonField;
  metric: string;
  searching: boolean;
  onSearch: (search: MapSearch | null) => void;
}) {
  const [kind, setKind] = useState<keyof typeof KINDS>("filter");
  const [text, setText] = useState("");
  const [textColumn, setTextColumn] = useState(textColumns[0] ?? "");
  const [limit, setLimit] = useState("100");
  const [problem, setProblem] = useState<string | null>(null);

  const submit = () => {
    const k = Number(limit);
    if (!text.trim()) return setProblem(kind === "vector" ? "paste a vector" : kind === "text" ? "type words to search for" : "type a filter");
    if (kind !== "filter" && (!Number.isInteger(k) || k < 1 || k > 10_000)) return setProblem("the number of hits is a whole number from 1 to 10,000");
    if (kind === "text" && !textColumn) return setProblem("this table has no text column");
    if (kind === "vector") {
      const parsed = parseVector(text, vectorColumn.type.length);
      if ("problem" in parsed) return setProblem(parsed.problem);
      setProblem(null);
      return onSearch({ kind, vector: parsed.vector, column: vectorColumn.name, metric, limit: k });
    }
    setProblem(null);
    onSearch(kind === "filter" ? { kind, filter: text.trim() } : { kind, words: text.trim(), column: textColumn, limit: k });
  };

  return (
    <form
      aria-label="Search the map"
      className="flex flex-wrap items-end gap-3"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <Field label="Light rows by" htmlFor="map-search-kind">
        <Select id="map-search-kind" value={kind} onChange={(e) => setKind(e.target.value as keyof typeof KINDS)}>
          {Object.entries(KINDS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </Select>
      </Field>
      {kind === "text" && (
        <Field label="In" htmlFor="map-search-column">
          <Select id="map-search-column" value={textColumn} onChange={(e) => setTextColumn(e.target.value)}>
            {textColumns.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </Select>
        </Field>
      )}
      <Field
        label={kind === "filter" ? "Filter" : kind === "text" ? "Words" : `Vector (${vectorColumn.type.length} values)`}
        htmlFor="map-search-text"
        hint={problem ?? undefined}
      >
        <TextInput
          id="map-search-text"
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-invalid={problem !== null}
          placeholder={kind === "filter" ? "label = 3 AND name LIKE '%7%'" : kind === "text" ? "red car" : "[0.1, 0.2, …]"}
          className="w-80 font-mono"
        />
      </Field>
      {kind !== "filter" && (
        <Field label="Hits" htmlFor="map-search-limit">
          <TextInput id="map-search-limit" value={limit} onChange={(e) => setLimit(e.target.value)} className="w-20" inputMode="numeric" />
        </Field>
      )}
      <Button type="submit" variant="secondary" disabled={searching}>
        Light
      </Button>
    </form>
  );
}
