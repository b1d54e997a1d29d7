/**
 * The namespace spec's structured full-text query (an FtsQuery: exactly one of match, phrase, boost, multi_match or
 * boolean, nested as deep as the client likes) as the engine's query object. The shape is checked here, level by
 * level, so that a key the engine would not use or a missing field is a 400 naming its path, never a dropped part.
 */
import "server-only";
import * as lancedb from "@lancedb/lancedb";
import { invalidInput } from "@/server/errors";

type Json = Record<string, unknown>;

function object(value: unknown, where: string, keys: readonly string[]): Json {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw invalidInput(`${where}: expected an object`);
  const unknown = Object.keys(value).filter((k) => !keys.includes(k));
  if (unknown.length) throw invalidInput(`${unknown.map((k) => `${where}.${k}`).join(", ")}: not a field of this query; it takes ${keys.join(", ")}`);
  return value as Json;
}

function text(o: Json, key: string, where: string): string {
  if (typeof o[key] !== "string") throw invalidInput(`${where}.${key}: a string is required`);
  return o[key];
}

function optionalNumber(o: Json, key: string, where: string, integer = false): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || (integer && (!Number.isInteger(v) || v < 0))) {
    throw invalidInput(`${where}.${key}: expected ${integer ? "a non-negative integer" : "a number"}`);
  }
  return v;
}

function operator(o: Json, where: string): lancedb.Operator | undefined {
  const v = o.operator;
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string" && v.toLowerCase() === "and") return lancedb.Operator.And;
  if (typeof v === "string" && v.toLowerCase() === "or") return lancedb.Operator.Or;
  throw invalidInput(`${where}.operator: '${String(v)}' is not And or Or`);
}

const MATCH = ["terms", "column", "boost", "fuzziness", "max_expansions", "operator", "prefix_length"] as const;

function match(value: unknown, where: string): lancedb.MatchQuery {
  const m = object(value, where, MATCH);
  return new lancedb.MatchQuery(text(m, "terms", where), text(m, "column", where), {
    boost: optionalNumber(m, "boost", where),
    fuzziness: optionalNumber(m, "fuzziness", where, true),
    maxExpansions: optionalNumber(m, "max_expansions", where, true),
    operator: operator(m, where),
    prefixLength: optionalNumber(m, "prefix_length", where, true),
  });
}

/** A multi_match is one query string over several columns: the engine's form, each match naming one column. */
function multiMatch(value: unknown, where: string): lancedb.MultiMatchQuery {
  const o = object(value, where, ["match_queries"]);
  const queries = o.match_queries;
  if (!Array.isArray(queries) || queries.length === 0) throw invalidInput(`${where}.match_queries: a non-empty list of match queries is required`);
  const matches = queries.map((q, i) => object(q, `${where}.match_queries[${i}]`, ["terms", "column", "boost", "operator"]));
  const terms = text(matches[0], "terms", `${where}.match_queries[0]`);
  const op = operator(matches[0], `${where}.match_queries[0]`);
  matches.forEach((m, i) => {
    if (text(m, "terms", `${where}.match_queries[${i}]`) !== terms || operator(m, `${where}.match_queries[${i}]`) !== op) {
      throw invalidInput(`${where}.match_queries: every match of a multi_match searches the same terms with the same operator`);
    }
  });
  return new lancedb.MultiMatchQuery(
    terms,
    matches.map((m, i) => text(m, "column", `${where}.match_queries[${i}]`)),
    { boosts: matches.map((m, i) => optionalNumber(m, "boost", `${where}.match_queries[${i}]`) ?? 1), operator: op },
  );
}

export function ftsQuery(value: unknown, where = "full_text_query.structured_query.query"): lancedb.FullTextQuery {
  const kinds = ["match", "phrase", "boost", "multi_match", "boolean"] as const;
  const o = object(value, where, kinds);
  const given = kinds.filter((k) => o[k] !== undefined && o[k] !== null);
  if (given.length !== 1) throw invalidInput(`${where}: exactly one of ${kinds.join(", ")} is required`);
  const kind = given[0];
  const at = `${where}.${kind}`;
  switch (kind) {
    case "match":
      return match(o.match, at);
    case "phrase": {
      const p = object(o.phrase, at, ["terms", "column", "slop"]);
      return new lancedb.PhraseQuery(text(p, "terms", at), text(p, "column", at), { slop: optionalNumber(p, "slop", at, true) });
    }
    case "boost": {
      const b = object(o.boost, at, ["positive", "negative", "negative_boost"]);
      return new lancedb.BoostQuery(ftsQuery(b.positive, `${at}.positive`), ftsQuery(b.negative, `${at}.negative`), {
        negativeBoost: optionalNumber(b, "negative_boost", at),
      });
    }
    case "multi_match":
      return multiMatch(o.multi_match, at);
    case "boolean": {
      const b = object(o.boolean, at, ["must", "should", "must_not"]);
      const clauses: Array<[lancedb.Occur, lancedb.FullTextQuery]> = [];
      for (const [key, occur] of [
        ["must", lancedb.Occur.Must],
        ["should", lancedb.Occur.Should],
        ["must_not", lancedb.Occur.MustNot],
      ] as const) {
        const list = b[key] ?? [];
        if (!Array.isArray(list)) throw invalidInput(`${at}.${key}: expected a list of queries`);
        list.forEach((q, i) => clauses.push([occur, ftsQuery(q, `${at}.${key}[${i}]`)]));
      }
      if (clauses.length === 0) throw invalidInput(`${at}: needs at least one query in must, should or must_not`);
      return new lancedb.BooleanQuery(clauses);
    }
  }
}
