/**
 * The index types a table's column can take, with each type's build parameters, their defaults and what they do, as
 * the console offers them. The server checks every request again; this is what the form explains up front.
 */
import type { JsonField } from "./arrow-schema";
import type { IndexTypeName } from "./contract/operations/indexes";

export type ColumnKind = "vector" | "text" | "scalar" | "list" | "other";

const NUMERIC = /^(u?int(8|16|32|64)|halffloat|float|double)$/;

/** What an index can do with a column of this type. */
export function columnKind(field: JsonField): ColumnKind {
  const t = field.type;
  if (t.type === "fixed_size_list") {
    const item = t.fields?.[0]?.type.type ?? "";
    return /^(halffloat|float|double|uint8)$/.test(item) ? "vector" : "other";
  }
  if (t.type === "string" || t.type === "large_string") return "text";
  if (t.type === "list" || t.type === "large_list") return "list";
  if (NUMERIC.test(t.type) || t.type === "bool" || /^(date|timestamp|time|decimal)/.test(t.type)) return "scalar";
  return "other";
}

export interface IndexParam {
  /** The request's field. */
  name: string;
  label: string;
  input: "number" | "select" | "boolean" | "text";
  options?: string[];
  /** What the engine does when the field is left out. */
  byDefault: string;
  hint: string;
}

const distance: IndexParam = {
  name: "distance_type",
  label: "Distance",
  input: "select",
  options: ["l2", "cosine", "dot", "hamming"],
  byDefault: "l2",
  hint: "How closeness is measured; queries must use the same. Cosine for normalised text embeddings, hamming for binary vectors.",
};
const partitions: IndexParam = {
  name: "num_partitions",
  label: "Partitions",
  input: "number",
  byDefault: "√rows",
  hint: "IVF clusters. More partitions make each search read less but need more rows to train (a few hundred rows per partition).",
};
const subVectors: IndexParam = {
  name: "num_sub_vectors",
  label: "Sub-vectors",
  input: "number",
  byDefault: "dimension ÷ 16",
  hint: "PQ splits each vector into this many pieces; more pieces keep more precision and take more space. Must divide the dimension.",
};
const bits: IndexParam = { name: "num_bits", label: "Bits", input: "number", byDefault: "8 (PQ), 1 (RQ)", hint: "Bits per code: more bits, more precision." };
const sampleRate: IndexParam = { name: "sample_rate", label: "Sample rate", input: "number", byDefault: "256", hint: "Rows per partition sampled to train." };
const iterations: IndexParam = {
  name: "max_iterations",
  label: "K-means iterations",
  input: "number",
  byDefault: "50",
  hint: "Training rounds of the clustering.",
};
const m: IndexParam = {
  name: "m",
  label: "Graph degree (m)",
  input: "number",
  byDefault: "20",
  hint: "Neighbours per node of the HNSW graph: higher is more accurate and larger.",
};
const ef: IndexParam = {
  name: "ef_construction",
  label: "Build candidates (ef)",
  input: "number",
  byDefault: "300",
  hint: "Candidates considered while building the graph: higher is more accurate and slower to build.",
};
const IVF = [distance, partitions, sampleRate, iterations];

const FTS: IndexParam[] = [
  {
    name: "base_tokenizer",
    label: "Tokenizer",
    input: "select",
    options: ["simple", "whitespace", "raw", "ngram"],
    byDefault: "simple",
    hint: "How text is split into words.",
  },
  { name: "language", label: "Language", input: "text", byDefault: "English", hint: "For stemming and stop words." },
  {
    name: "with_position",
    label: "Positions",
    input: "boolean",
    byDefault: "on",
    hint: "Keep word positions, which phrase queries need; off makes the index smaller and faster to build.",
  },
  { name: "lower_case", label: "Lower case", input: "boolean", byDefault: "on", hint: "Match regardless of case." },
  { name: "stem", label: "Stemming", input: "boolean", byDefault: "on", hint: "Match word forms (running, runs → run)." },
  { name: "remove_stop_words", label: "Remove stop words", input: "boolean", byDefault: "on", hint: "Leave out words like 'the' and 'of'." },
  { name: "ascii_folding", label: "ASCII folding", input: "boolean", byDefault: "on", hint: "Match accented letters as plain ones (café → cafe)." },
  { name: "max_token_length", label: "Longest word", input: "number", byDefault: "40", hint: "Longer words are left out of the index." },
];

export interface IndexType {
  type: IndexTypeName;
  label: string;
  columns: ColumnKind[];
  params: IndexParam[];
  description: string;
  /** Rows a table needs before this index can be trained. */
  minRows?: number;
}

export const INDEX_TYPES: IndexType[] = [
  { type: "BTREE", label: "B-tree", columns: ["scalar", "text"], params: [], description: "Range and equality filters on columns with many distinct values." },
  {
    type: "BITMAP",
    label: "Bitmap",
    columns: ["scalar", "text"],
    params: [],
    description: "Equality filters on columns with few distinct values (under a few thousand).",
  },
  {
    type: "LABEL_LIST",
    label: "Label list",
    columns: ["list"],
    params: [],
    description: "array_has_any / array_has_all filters on list columns (tags, labels).",
  },
  { type: "FTS", label: "Full-text", columns: ["text"], params: FTS, description: "Full-text search ranked by BM25." },
  {
    type: "IVF_PQ",
    label: "IVF-PQ",
    columns: ["vector"],
    params: [...IVF, subVectors, bits],
    description: "Vector search on compressed vectors: small and fast, slightly approximate. The usual choice.",
    minRows: 256,
  },
  {
    type: "IVF_RQ",
    label: "IVF-RQ",
    columns: ["vector"],
    params: [...IVF, bits],
    description: "Vector search with RaBitQ quantisation: very compact.",
    minRows: 256,
  },
  {
    type: "IVF_FLAT",
    label: "IVF-Flat",
    columns: ["vector"],
    params: IVF,
    description: "Vector search on full vectors: exact within the partitions searched, larger.",
    minRows: 2,
  },
  {
    type: "IVF_HNSW_PQ",
    label: "IVF-HNSW-PQ",
    columns: ["vector"],
    params: [...IVF, subVectors, m, ef],
    description: "A graph per partition over compressed vectors: high recall at low latency.",
    minRows: 256,
  },
  {
    type: "IVF_HNSW_SQ",
    label: "IVF-HNSW-SQ",
    columns: ["vector"],
    params: [...IVF, m, ef],
    description: "A graph per partition over scalar-quantised vectors: higher recall than PQ, larger.",
    minRows: 256,
  },
];

/** The index types a column can take. */
export const typesFor = (field: JsonField) => INDEX_TYPES.filter((t) => t.columns.includes(columnKind(field)));

/** The request's name of an index type the engine lists by its own (IvfPq, BTree, Inverted): IVF_PQ, BTREE, FTS. */
export function indexTypeLabel(engineName: string): string {
  const plain = engineName.toUpperCase().replace(/_/g, "");
  if (plain === "INVERTED") return "FTS";
  return INDEX_TYPES.find((t) => t.type.replace(/_/g, "") === plain)?.type ?? engineName;
}

/** An index's recorded build parameters (JSON text) as short `name value` pairs, leaving out the engine's tuning hints. */
export function buildParameters(detailsJson: string | undefined): string[] {
  let details: unknown;
  try {
    details = detailsJson ? JSON.parse(detailsJson) : undefined;
  } catch {
    return [detailsJson!];
  }
  const pairs: string[] = [];
  const walk = (value: unknown, name: string) => {
    if (value === null || value === undefined || name === "runtime_hints") return;
    if (typeof value === "object" && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, key);
      return;
    }
    pairs.push(`${name.replace(/_/g, " ")} ${Array.isArray(value) ? value.join(", ") : String(value).toLowerCase()}`);
  };
  walk(details, "");
  return pairs;
}
