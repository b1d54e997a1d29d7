/**
 * What a SQL statement reads, from DuckDB's own parse of it (`json_serialize_sql`): the tables it names (with where
 * in the text, and the version or tag an `AT (VERSION => …)` clause asks for), and, for a statement that reads one
 * table, the part of its WHERE clause and LIMIT that Lance can apply itself. Nothing here runs a query.
 */
import "server-only";

/** A node of DuckDB's serialized parse tree. */
type Node = { [key: string]: unknown };

export interface TableReference {
  /** The name as written: catalog, schema and table parts, the empty ones left out. */
  parts: string[];
  alias: string;
  /** Where the name starts in the statement's text. */
  location: number;
  /** `AT (VERSION => 3)` or `AT (VERSION => 'tag')`: where the clause is in the text, and what it asks for. */
  at: { version: number } | { tag: string } | null;
  atSpan: { start: number; end: number } | null;
}

export interface Pushdown {
  /** A Lance filter equal to some conjuncts of the WHERE clause (DuckDB applies the whole clause again). */
  filter: string | null;
  /** Rows enough for the statement: its LIMIT plus OFFSET, when the filter is the whole WHERE and nothing reorders or groups. */
  limit: number | null;
}

/** A statement that does not parse, or asks for what Quiver refuses, with where in the text. */
export class StatementError extends Error {
  constructor(
    message: string,
    readonly position: number | null,
  ) {
    super(message);
  }
}

const NO_LOCATION = 2 ** 64 - 1;
const located = (n: unknown): number | null => {
  const loc = (n as Node | null)?.query_location;
  return typeof loc === "number" && loc < NO_LOCATION / 2 ? loc : null;
};

/** Every object in the tree, depth first. */
function* walk(n: unknown): Generator<Node> {
  if (Array.isArray(n)) for (const c of n) yield* walk(c);
  else if (n && typeof n === "object") {
    yield n as Node;
    for (const v of Object.values(n)) yield* walk(v);
  }
}

/** The statement's parse, as `json_serialize_sql` answered it: exactly one SELECT, or a StatementError. */
export function selectOf(serialized: string): Node {
  const parsed = JSON.parse(serialized) as { error: boolean; error_message?: string; position?: string; statements?: Array<{ node: Node }> };
  if (parsed.error) {
    const message = parsed.error_message ?? "the statement does not parse";
    const position = parsed.position !== undefined ? Number(parsed.position) : null;
    if (/only SELECT statements/i.test(message))
      throw new StatementError("only a read is allowed: one SELECT (or WITH … SELECT, VALUES, a set operation) statement", 0);
    throw new StatementError(message, position);
  }
  const statements = parsed.statements ?? [];
  if (statements.length !== 1)
    throw new StatementError(statements.length ? "one statement at a time: the text holds " + statements.length : "the text holds no statement", null);
  return statements[0].node;
}

/** Every name the statement reads a table by, leaving out the names of its common table expressions. */
export function tableReferences(sql: string, select: Node): TableReference[] {
  const cteNames = new Set<string>();
  for (const n of walk(select)) {
    const map = (n.cte_map as { map?: Array<{ key: string }> } | undefined)?.map;
    for (const entry of map ?? []) cteNames.add(entry.key.toLowerCase());
  }
  const refs: TableReference[] = [];
  for (const n of walk(select)) {
    if (n.type !== "BASE_TABLE") continue;
    const parts = [n.catalog_name, n.schema_name, n.table_name].filter((p): p is string => typeof p === "string" && p !== "");
    if (parts.length === 1 && cteNames.has(parts[0].toLowerCase())) continue;
    const location = located(n) ?? 0;
    const atClause = n.at_clause as { unit: string; expr: Node } | null;
    refs.push({ parts, alias: String(n.alias ?? ""), location, ...atOf(sql, atClause, location) });
  }
  return refs;
}

function atOf(sql: string, clause: { unit: string; expr: Node } | null, location: number): Pick<TableReference, "at" | "atSpan"> {
  if (!clause) return { at: null, atSpan: null };
  const where = located(clause.expr) ?? location;
  if (clause.unit.toUpperCase() !== "VERSION") throw new StatementError(`AT (${clause.unit} => …) is not supported: name a version (a number) or a tag`, where);
  const constant = clause.expr.class === "CONSTANT" ? (clause.expr.value as { type: { id: string }; value: unknown }) : null;
  let at: TableReference["at"];
  if (constant && typeof constant.value === "number" && Number.isSafeInteger(constant.value) && constant.value >= 0) at = { version: constant.value };
  else if (constant && constant.type.id === "VARCHAR" && typeof constant.value === "string" && constant.value) at = { tag: constant.value };
  else throw new StatementError("AT (VERSION => …) takes a version number or a tag name", where);
  return { at, atSpan: atSpanIn(sql, location, where) };
}

/** The text of `AT ( VERSION => expr )` around the expression at `exprAt`: from the `AT` keyword to its closing parenthesis. */
function atSpanIn(sql: string, nameAt: number, exprAt: number): { start: number; end: number } {
  const before = sql.slice(nameAt, exprAt);
  const keyword = /\bAT\s*\(\s*VERSION\s*=>\s*$/i.exec(before);
  if (!keyword) throw new StatementError("could not find the AT clause's text", exprAt);
  let i = exprAt;
  if (sql[i] === "'") {
    for (i++; i < sql.length; i++) {
      if (sql[i] === "'" && sql[i + 1] === "'") i++;
      else if (sql[i] === "'") break;
    }
  }
  const close = sql.indexOf(")", i);
  if (close < 0) throw new StatementError("the AT clause is not closed", exprAt);
  return { start: nameAt + keyword.index, end: close + 1 };
}

/** Where the written name of a table ends: identifiers (quoted or not) joined by dots, from `start`. */
export function nameEnd(sql: string, start: number): number {
  let i = start;
  for (;;) {
    if (sql[i] === '"') {
      for (i++; i < sql.length; i++) {
        if (sql[i] === '"' && sql[i + 1] === '"') i++;
        else if (sql[i] === '"') break;
      }
      i++;
    } else {
      const m = /^[\p{L}\p{N}_$]+/u.exec(sql.slice(i));
      if (!m) return i;
      i += m[0].length;
    }
    const dot = /^\s*\.\s*/.exec(sql.slice(i));
    if (!dot) return i;
    i += dot[0].length;
  }
}

// ------------------------------------------------------------------------------------------------ pushdown

type ColumnKind = "number" | "string" | "other";

const COMPARISONS: Record<string, string> = {
  COMPARE_EQUAL: "=",
  COMPARE_NOTEQUAL: "!=",
  COMPARE_LESSTHAN: "<",
  COMPARE_GREATERTHAN: ">",
  COMPARE_LESSTHANOREQUALTO: "<=",
  COMPARE_GREATERTHANOREQUALTO: ">=",
};
const FLIPPED: Record<string, string> = { "=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<=" };

/**
 * What Lance can do of a statement that reads one table and joins nothing: the WHERE clause's conjuncts that compare
 * a column with a constant (numbers with numbers, text with text), and the LIMIT when those are the whole clause and
 * the statement neither groups, orders, aggregates nor de-duplicates. `names` are the names the table is known by
 * in the statement (its alias, or its name); `columns` its columns with their kind; `aggregates` DuckDB's
 * aggregate function names (lower case).
 */
export function pushdownOf(
  select: Node,
  ref: TableReference,
  names: string[],
  columns: Map<string, { name: string; kind: ColumnKind }>,
  aggregates: Set<string>,
): Pushdown {
  const none = { filter: null, limit: null };
  // The statement's own FROM must be this very reference: not a common table expression or subquery over it, whose
  // columns and rows may differ from the table's.
  const from = select.from_table as Node | null;
  if (select.type !== "SELECT_NODE" || from?.type !== "BASE_TABLE" || located(from) !== ref.location) return none;
  const lowerNames = new Set(names.map((n) => n.toLowerCase()));
  const column = (n: Node | undefined): { name: string; kind: ColumnKind } | null => {
    if (n?.class !== "COLUMN_REF") return null;
    const path = n.column_names as string[];
    if (path.length > 2 || (path.length === 2 && !lowerNames.has(path[0].toLowerCase()))) return null;
    return columns.get(path[path.length - 1].toLowerCase()) ?? null;
  };
  const constant = (n: Node | undefined, kind: ColumnKind): string | null => {
    if (n?.class !== "CONSTANT") return null;
    const { type, is_null, value } = n.value as { type: { id: string; type_info: { scale?: number } | null }; is_null: boolean; value: unknown };
    if (is_null) return null;
    if (kind === "number") {
      if (["TINYINT", "SMALLINT", "INTEGER", "BIGINT"].includes(type.id) && typeof value === "number" && Number.isSafeInteger(value)) return String(value);
      if (type.id === "DOUBLE" && typeof value === "number" && Number.isFinite(value)) return String(value);
      if (type.id === "DECIMAL" && typeof value === "number" && Number.isSafeInteger(value)) return String(value / 10 ** (type.type_info?.scale ?? 0));
      return null;
    }
    if (kind === "string" && type.id === "VARCHAR" && typeof value === "string") return `'${value.replace(/'/g, "''")}'`;
    return null;
  };
  const quoted = (name: string) => `\`${name.replace(/`/g, "``")}\``;
  const translate = (n: Node): string | null => {
    const op = COMPARISONS[String(n.type)];
    if (op && n.class === "COMPARISON") {
      const [l, r] = [n.left as Node, n.right as Node];
      const lc = column(l);
      if (lc) {
        const v = constant(r, lc.kind);
        return v === null ? null : `${quoted(lc.name)} ${op} ${v}`;
      }
      const rc = column(r);
      const v = rc ? constant(l, rc.kind) : null;
      return rc && v !== null ? `${quoted(rc.name)} ${FLIPPED[op]} ${v}` : null;
    }
    if (n.type === "COMPARE_IN" || n.type === "COMPARE_NOT_IN") {
      const [target, ...values] = n.children as Node[];
      const c = column(target);
      const literals = c ? values.map((v) => constant(v, c.kind)) : [];
      if (!c || !literals.length || literals.includes(null)) return null;
      return `${quoted(c.name)} ${n.type === "COMPARE_NOT_IN" ? "NOT IN" : "IN"} (${literals.join(", ")})`;
    }
    if (n.type === "OPERATOR_IS_NULL" || n.type === "OPERATOR_IS_NOT_NULL") {
      const c = column((n.children as Node[])[0]);
      return c ? `${quoted(c.name)} ${n.type === "OPERATOR_IS_NULL" ? "IS NULL" : "IS NOT NULL"}` : null;
    }
    if (n.type === "COMPARE_BETWEEN") {
      const c = column(n.input as Node);
      const lower = c ? constant(n.lower as Node, c.kind) : null;
      const upper = c ? constant(n.upper as Node, c.kind) : null;
      return c && lower !== null && upper !== null ? `${quoted(c.name)} BETWEEN ${lower} AND ${upper}` : null;
    }
    return null;
  };
  const where = select.where_clause as Node | null;
  const conjuncts = !where ? [] : where.type === "CONJUNCTION_AND" ? (where.children as Node[]) : [where];
  const pushed = conjuncts.map(translate);
  const filter = pushed.filter((p): p is string => p !== null);
  const whole = !pushed.includes(null);
  return { filter: filter.length ? filter.map((f) => `(${f})`).join(" AND ") : null, limit: whole ? limitOf(select, aggregates) : null };
}

function limitOf(select: Node, aggregates: Set<string>): number | null {
  const modifiers = select.modifiers as Node[];
  if (modifiers.length !== 1 || modifiers[0].type !== "LIMIT_MODIFIER") return null;
  if ((select.group_expressions as unknown[]).length || select.having || select.qualify || select.sample) return null;
  if (select.aggregate_handling !== "STANDARD_HANDLING") return null;
  for (const n of walk(select.select_list)) {
    if (n.class === "WINDOW" || n.class === "SUBQUERY") return null;
    if (n.class === "FUNCTION" && (aggregates.has(String(n.function_name).toLowerCase()) || /unnest|generate_subscripts/i.test(String(n.function_name))))
      return null;
  }
  const count = (n: unknown) => {
    const v = (n as Node | null)?.class === "CONSTANT" ? ((n as Node).value as { value: unknown }).value : undefined;
    return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null;
  };
  const limit = count(modifiers[0].limit);
  const offset = modifiers[0].offset ? count(modifiers[0].offset) : 0;
  return limit === null || offset === null ? null : limit + offset;
}

// ------------------------------------------------------------------------------------------------ searches

/** `vector_search(table, [..], k)` or `text_search(table, 'words', k)`: a search Lance runs, read as a table. */
export interface SearchCall {
  kind: "vector_search" | "text_search";
  /** The table's name as the call's first argument gives it, and its parts. */
  table: string;
  parts: string[];
  vector: number[] | null;
  text: string | null;
  k: number;
  vectorColumn: string | null;
  distanceType: string | null;
  location: number;
}

export const SEARCH_FUNCTIONS = ["vector_search", "text_search"] as const;

const constantValue = (n: Node | undefined): unknown => {
  if (n?.class !== "CONSTANT") return undefined;
  const { type, value } = n.value as { type: { id: string; type_info: { scale?: number } | null }; value: unknown };
  if (type.id === "DECIMAL" && typeof value === "number") return value / 10 ** (type.type_info?.scale ?? 0);
  return value;
};

/** The same search, as DuckDB binds it and as the text states it: so that each call finds the rows Lance found for it. */
export const searchKey = (kind: string, table: string, query: number[] | string, k: number, vectorColumn: string | null, distanceType: string | null) =>
  JSON.stringify([kind, table, typeof query === "string" ? query : query.map((v) => Number(v.toPrecision(7))), k, vectorColumn, distanceType]);

export function searchCalls(select: Node): SearchCall[] {
  const calls: SearchCall[] = [];
  for (const n of walk(select)) {
    if (n.type !== "TABLE_FUNCTION") continue;
    const fn = n.function as Node;
    const kind = String(fn.function_name).toLowerCase();
    if (!(SEARCH_FUNCTIONS as readonly string[]).includes(kind)) continue;
    const location = located(n) ?? 0;
    const args = fn.children as Node[];
    const positional = args.filter((a) => !a.alias);
    const named = new Map(args.filter((a) => a.alias).map((a) => [String(a.alias).toLowerCase(), constantValue(a)]));
    const usage =
      kind === "vector_search"
        ? "vector_search('namespace.table', [0.1, 0.2, …], k [, vector_column := 'v'] [, distance_type := 'cosine'])"
        : "text_search('namespace.table', 'words', k)";
    const table = constantValue(positional[0]);
    const k = constantValue(positional[2]);
    if (positional.length !== 3 || typeof table !== "string" || typeof k !== "number" || !Number.isSafeInteger(k) || k < 1)
      throw new StatementError(`${kind} takes constants: ${usage}`, location);
    let vector: number[] | null = null;
    let text: string | null = null;
    if (kind === "vector_search") {
      const list = positional[1];
      const values = list.class === "FUNCTION" && list.function_name === "list_value" ? (list.children as Node[]).map(constantValue) : [];
      if (!values.length || values.some((v) => typeof v !== "number"))
        throw new StatementError(`${kind}'s vector is a list of numbers: ${usage}`, located(list) ?? location);
      vector = values as number[];
    } else {
      const words = constantValue(positional[1]);
      if (typeof words !== "string") throw new StatementError(`${kind}'s query is a string: ${usage}`, located(positional[1]) ?? location);
      text = words;
    }
    for (const name of named.keys())
      if (kind !== "vector_search" || !["vector_column", "distance_type"].includes(name))
        throw new StatementError(`${kind} takes no '${name}': ${usage}`, location);
    const vectorColumn = named.get("vector_column");
    const distanceType = named.get("distance_type");
    calls.push({
      kind: kind as SearchCall["kind"],
      table,
      parts: table.split("."),
      vector,
      text,
      k,
      vectorColumn: typeof vectorColumn === "string" ? vectorColumn : null,
      distanceType: typeof distanceType === "string" ? distanceType : null,
      location,
    });
  }
  return calls;
}
