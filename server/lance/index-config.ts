/**
 * The engine's index configuration for a CreateTableIndex request: its type and every option a client may send
 * (the Lance Namespace's names, and LanceDB's remote client's). An option the index type has no use for, or that this
 * engine cannot honour, is refused by name; an option the remote client always sends is taken when it asks for what
 * the engine does anyway.
 */
import "server-only";
import * as lancedb from "@lancedb/lancedb";
import { invalidInput, unsupported } from "@/server/errors";
import { INDEX_TYPE_NAMES, isIndexTypeName, type IndexTypeName } from "@/lib/contract/operations/indexes";

export interface IndexOptions {
  distanceType?: string;
  numPartitions?: number;
  numSubVectors?: number;
  numBits?: number;
  sampleRate?: number;
  maxIterations?: number;
  targetPartitionSize?: number;
  m?: number;
  efConstruction?: number;
  withPosition?: boolean;
  baseTokenizer?: string;
  language?: string;
  maxTokenLength?: number;
  lowercase?: boolean;
  stem?: boolean;
  removeStopWords?: boolean;
  customStopWords?: string[];
  asciiFolding?: boolean;
  ngramMinLength?: number;
  ngramMaxLength?: number;
  prefixOnly?: boolean;
  blockSize?: number;
  /** Tokenizer options of newer engines: accepted only at the value that means "off". */
  indexOperators?: boolean;
  lanceTokenizer?: string;
  preserveOriginal?: boolean;
  splitIdentifiers?: boolean;
  splitOnNumerics?: boolean;
}

type Option = keyof IndexOptions;

const IVF: Option[] = ["distanceType", "numPartitions", "sampleRate", "maxIterations"];
const HNSW: Option[] = [...IVF, "m", "efConstruction"];
const FTS: Option[] = [
  "withPosition",
  "baseTokenizer",
  "language",
  "maxTokenLength",
  "lowercase",
  "stem",
  "removeStopWords",
  "customStopWords",
  "asciiFolding",
  "ngramMinLength",
  "ngramMaxLength",
  "prefixOnly",
  "blockSize",
  "indexOperators",
  "lanceTokenizer",
  "preserveOriginal",
  "splitIdentifiers",
  "splitOnNumerics",
];

/** What each index type takes, and how the engine builds it from those options. */
const TYPES: Record<IndexTypeName, { takes: Option[]; make: (o: IndexOptions) => lancedb.Index }> = {
  BTREE: { takes: [], make: () => lancedb.Index.btree() },
  BITMAP: { takes: [], make: () => lancedb.Index.bitmap() },
  LABEL_LIST: { takes: [], make: () => lancedb.Index.labelList() },
  FTS: { takes: FTS, make: (o) => lancedb.Index.fts(ftsOptions(o)) },
  IVF_PQ: {
    takes: [...IVF, "numSubVectors", "numBits"],
    make: (o) => lancedb.Index.ivfPq(defined({ ...vectorOptions(o), numSubVectors: o.numSubVectors, numBits: o.numBits })),
  },
  IVF_RQ: { takes: [...IVF, "numBits"], make: (o) => lancedb.Index.ivfRq(defined({ ...vectorOptions(o), numBits: o.numBits })) },
  IVF_FLAT: { takes: IVF, make: (o) => lancedb.Index.ivfFlat(defined(vectorOptions(o))) },
  IVF_HNSW_PQ: {
    takes: [...HNSW, "numSubVectors"],
    make: (o) => lancedb.Index.hnswPq(defined({ ...vectorOptions(o), numSubVectors: o.numSubVectors, m: o.m, efConstruction: o.efConstruction })),
  },
  IVF_HNSW_SQ: { takes: HNSW, make: (o) => lancedb.Index.hnswSq(defined({ ...vectorOptions(o), m: o.m, efConstruction: o.efConstruction })) },
};
const ALIASES: Record<string, string> = { SCALAR: "BTREE", LABELLIST: "LABEL_LIST", INVERTED: "FTS", VECTOR: "IVF_PQ" };

/** Options this engine has no setting for, with the value a client may still send because it asks for nothing. */
const OFF_ONLY: Partial<Record<Option, unknown>> = {
  indexOperators: false,
  lanceTokenizer: null,
  preserveOriginal: false,
  splitIdentifiers: false,
  splitOnNumerics: false,
};

/** The request's name for an option, for messages. */
const wireName = (option: Option) => option.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace("lowercase", "lower_case");

const DISTANCES = new Set(["l2", "cosine", "dot", "hamming"]);

function vectorOptions(o: IndexOptions) {
  return {
    distanceType: o.distanceType as "l2" | "cosine" | "dot" | undefined,
    numPartitions: o.numPartitions,
    sampleRate: o.sampleRate,
    maxIterations: o.maxIterations,
  };
}

function ftsOptions(o: IndexOptions) {
  return defined({
    withPosition: o.withPosition,
    baseTokenizer: o.baseTokenizer as "simple" | "whitespace" | "raw" | "ngram" | undefined,
    language: o.language,
    maxTokenLength: o.maxTokenLength,
    lowercase: o.lowercase,
    stem: o.stem,
    removeStopWords: o.removeStopWords,
    customStopWords: o.customStopWords,
    asciiFolding: o.asciiFolding,
    ngramMinLength: o.ngramMinLength,
    ngramMaxLength: o.ngramMaxLength,
    prefixOnly: o.prefixOnly,
    blockSize: o.blockSize as 128 | 256 | undefined,
  });
}

const defined = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The type's name as the engine knows it (the remote client's aliases, any case). */
export const indexTypeName = (type: string) => ALIASES[type.toUpperCase()] ?? type.toUpperCase();

/** The engine's configuration of an index of `type` with `options`; refuses what it cannot build as asked. */
export function indexConfig(type: string, options: IndexOptions, scalarOnly = false): unknown {
  const name = indexTypeName(type);
  if (!isIndexTypeName(name)) throw unsupported(`index type '${type}' is not supported; use ${INDEX_TYPE_NAMES.join(", ")}`);
  const kind = TYPES[name];
  if (scalarOnly && name.startsWith("IVF_"))
    throw invalidInput(`${name} is a vector index: CreateTableScalarIndex builds scalar and full-text indices; use create_index`);
  const given = (Object.keys(options) as Option[]).filter((option) => options[option] !== undefined);
  const misplaced = given.filter((option) => !kind.takes.includes(option));
  if (misplaced.length) throw invalidInput(`${misplaced.map(wireName).join(", ")} ${misplaced.length === 1 ? "does" : "do"} not apply to a ${name} index`);
  const unhonoured = given.filter((option) => option in OFF_ONLY && options[option] !== OFF_ONLY[option]);
  if (unhonoured.length) throw unsupported(`${unhonoured.map(wireName).join(", ")}: this engine's full-text index has no such setting`);
  if (options.distanceType !== undefined && !DISTANCES.has(options.distanceType.toLowerCase())) {
    throw invalidInput(`distance type '${options.distanceType}' is not one of l2, cosine, dot, hamming`);
  }
  const normalized = { ...options, distanceType: options.distanceType?.toLowerCase() };
  return (kind.make(normalized) as unknown as { inner: unknown }).inner;
}
