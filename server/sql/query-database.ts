/**
 * The DuckDB databases SQL statements run in. Each statement has one to itself while it runs, holding nothing but
 * views of the tables the statement names, over table functions that hand DuckDB the rows Lance read. A database is
 * kept for the next statement rather than closed (making one takes 10-20 ms of CPU and closing one a few more: more
 * than a point query itself): what a statement defined in it is dropped once it is done, and its table functions
 * read the statement's rows through slots emptied then, so that a later statement naming one finds nothing to read.
 */
import "server-only";
import type * as arrow from "apache-arrow";
import {
  BIGINT,
  DOUBLE,
  DuckDBInstance,
  DuckDBListValue,
  DuckDBTableFunction,
  LIST,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBDataChunk,
  type DuckDBTableFunctionInfo,
} from "@duckdb/node-api";
import bindings from "@duckdb/node-bindings";
import { config } from "@/server/config";
import type { Id } from "@/server/catalog/catalog";
import type { ColumnFeed } from "./columns";
import { SEARCH_FUNCTIONS, searchKey, type SearchCall } from "./statement";

/** Rows Lance read, for DuckDB: their columns as DuckDB takes them, and the Arrow batches. */
export interface Rows {
  id: Id;
  feeds: ColumnFeed[];
  batches: arrow.RecordBatch[];
}

/** A table as a statement reads it: its rows, and the name of the view the statement knows them by. */
export interface TableRows extends Rows {
  /** As written for the latest version, a name of its own for an `AT` reference (see run-sql.ts). */
  view: string[];
}

/** What no DuckDB of ours may do: reach a file, a URL or an extension, or change its settings. */
export const SAFE_SETTINGS = {
  enable_external_access: "false",
  autoinstall_known_extensions: "false",
  autoload_known_extensions: "false",
  allow_community_extensions: "false",
  allow_unsigned_extensions: "false",
  lock_configuration: "true",
};

const MiB = 1024 * 1024;
/** Databases kept between statements: as many as statements usually run at once. */
const KEPT = 2;

export const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The table function that reads the statement's `n`th table (1, 2, …). */
export const tableFunction = (n: number) => `lance_table_${n}`;

export class QueryDatabase {
  /** The rows each `lance_table_<n>` function reads (slot n - 1), while a statement runs; null between statements. */
  private readonly slots: Array<Rows | null> = [];
  /** The rows each search a statement calls found, by its arguments (searchKey). */
  private searches = new Map<string, Rows>();
  /** What drops the statement's views, schemas and databases, in the order to run it. */
  private readonly undo: string[] = [];

  private constructor(
    private readonly instance: DuckDBInstance,
    /** The connection functions are registered through, held open with the database. */
    private readonly own: DuckDBConnection,
  ) {}

  static async make(): Promise<QueryDatabase> {
    const instance = await DuckDBInstance.create(":memory:", {
      ...SAFE_SETTINGS,
      threads: String(config.sqlThreads),
      memory_limit: `${Math.max(16, Math.floor(config.sqlMemoryBytes / MiB))}MB`,
      max_temp_directory_size: "0B",
    });
    const db = new QueryDatabase(instance, await instance.connect());
    for (const kind of SEARCH_FUNCTIONS) db.registerSearch(kind);
    return db;
  }

  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  /** Has `tableFunction(n)` read `rows`, and defines the view the statement names them by over it. */
  async define(connection: DuckDBConnection, n: number, rows: TableRows): Promise<void> {
    while (this.slots.length < n) this.registerSlot(this.slots.length + 1);
    this.slots[n - 1] = rows;
    const [view, ...schemaPath] = [...rows.view].reverse();
    const schema = schemaPath.reverse();
    const run = async (statement: string, undo: string) => {
      await connection.run(statement);
      this.undo.unshift(undo);
    };
    if (schema.length === 2) await run(`ATTACH IF NOT EXISTS ':memory:' AS ${quoteIdent(schema[0])}`, `DETACH DATABASE IF EXISTS ${quoteIdent(schema[0])}`);
    else if (schema.length === 1) await run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema[0])}`, `DROP SCHEMA IF EXISTS ${quoteIdent(schema[0])} CASCADE`);
    if (schema.length === 2) await connection.run(`CREATE SCHEMA IF NOT EXISTS ${schema.map(quoteIdent).join(".")}`);
    const name = [...schema, view].map(quoteIdent).join(".");
    await run(`CREATE VIEW ${name} AS SELECT * FROM ${tableFunction(n)}()`, `DROP VIEW IF EXISTS ${name}`);
  }

  /** The rows the statement's searches found, for `vector_search` and `text_search` to bind to. */
  useSearches(searches: Map<string, Rows>) {
    this.searches = searches;
  }

  /** Takes away what the last statement defined and the rows it read, for the next statement. */
  async clear(): Promise<void> {
    this.slots.fill(null);
    this.searches = new Map();
    for (const statement of this.undo.splice(0)) await this.own.run(statement);
  }

  close() {
    this.own.closeSync();
    this.instance.closeSync();
  }

  private registerSlot(n: number) {
    const slot = n - 1;
    this.slots[slot] = null;
    this.own.registerTableFunction(
      DuckDBTableFunction.create({
        name: tableFunction(n),
        supportsProjectionPushdown: true,
        bindFunction: (bind) => {
          const rows = this.slots[slot];
          if (!rows) return bind.setError(`${tableFunction(n)} reads nothing here`);
          for (const feed of rows.feeds) bind.addResultColumn(feed.name, feed.type);
          bind.setBindData({ rows });
        },
        initFunction: startScan,
        mainFunction: (info, out) => feed((info.bindData as { rows: Rows }).rows, info, out),
      }),
    );
  }

  /** The search function of one kind: each call binds to the rows Lance found for its arguments. */
  private registerSearch(kind: SearchCall["kind"]) {
    this.own.registerTableFunction(
      DuckDBTableFunction.create({
        name: kind,
        parameterTypes: kind === "vector_search" ? [VARCHAR, LIST(DOUBLE), BIGINT] : [VARCHAR, VARCHAR, BIGINT],
        namedParameterTypes: kind === "vector_search" ? { vector_column: VARCHAR, distance_type: VARCHAR } : {},
        supportsProjectionPushdown: true,
        bindFunction: (bind) => {
          const query = bind.getParameter(1);
          const named = (name: string) => {
            const v = bind.getNamedParameter(name);
            return v === null ? null : String(v);
          };
          const key = searchKey(
            kind,
            String(bind.getParameter(0)),
            query instanceof DuckDBListValue ? query.items.map(Number) : String(query),
            Number(bind.getParameter(2)),
            kind === "vector_search" ? named("vector_column") : null,
            kind === "vector_search" ? named("distance_type") : null,
          );
          const rows = this.searches.get(key);
          if (!rows) return bind.setError(`${kind}'s arguments must be constants`);
          for (const column of rows.feeds) bind.addResultColumn(column.name, column.type);
          bind.setBindData({ rows });
        },
        initFunction: startScan,
        mainFunction: (info, out) => feed((info.bindData as { rows: Rows }).rows, info, out),
      }),
    );
  }
}

const kept: QueryDatabase[] = [];

/** A database for one statement: one kept from an earlier statement, or else a new one. */
export async function takeDatabase(): Promise<QueryDatabase> {
  return kept.pop() ?? QueryDatabase.make();
}

/**
 * Gives a statement's database back once its answer is on its way: kept for the next statement when the statement
 * ended well, closed when it was stopped or failed (whatever state that left, the next statement does not meet it).
 */
export function giveBack(db: QueryDatabase, reusable: boolean) {
  setImmediate(() => {
    if (!reusable) return db.close();
    db.clear().then(
      () => {
        // The newest is taken first, and the oldest closed past the few kept.
        kept.push(db);
        if (kept.length > KEPT) kept.shift()!.close();
      },
      () => db.close(),
    );
  });
}

const startScan = (init: { getColumnIndexes(): number[]; setInitData(data: object): void; setMaxThreads(n: number): void }) => {
  init.setInitData({ columns: init.getColumnIndexes(), batch: 0, row: 0 });
  init.setMaxThreads(1);
};

/** Hands DuckDB the next rows of a scan, up to a chunk, of the columns it asked for. */
function feed(rows: Rows, info: DuckDBTableFunctionInfo, out: DuckDBDataChunk) {
  const state = info.initData as { columns: number[]; batch: number; row: number };
  try {
    while (state.batch < rows.batches.length && state.row >= rows.batches[state.batch].numRows) {
      state.batch++;
      state.row = 0;
    }
    const batch = rows.batches[state.batch];
    if (!batch) {
      out.rowCount = 0;
      return;
    }
    const n = Math.min(2048, batch.numRows - state.row);
    out.rowCount = n;
    state.columns.forEach((index, k) => {
      const column = rows.feeds[index];
      const values = batch.getChild(column.name);
      const data = values?.data.length === 1 ? values.data[0] : null;
      if (column.sameBytes && data && data.nullCount === 0) {
        // Numbers without nulls: their bytes straight into DuckDB's vector, as its own flush would write them.
        const items = (data.values as Int32Array).subarray(data.offset + state.row, data.offset + state.row + n);
        bindings.copy_data_to_vector(bindings.data_chunk_get_vector(out.chunk, k), 0, items.buffer as ArrayBuffer, items.byteOffset, items.byteLength);
        return;
      }
      const vector = out.getColumnVector(k);
      for (let r = 0; r < n; r++) {
        const v: unknown = values?.get(state.row + r);
        vector.setItem(r, v === null || v === undefined ? null : column.value(v));
      }
      vector.flush();
    });
    state.row += n;
  } catch (err) {
    info.setError(`reading table '${rows.id.join(".")}' failed: ${(err as Error).message}`);
  }
}
