/** Test data through the real API, as a program with the admin key would write it. */
import { Float64, Int64, Table, tableFromIPC, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";
import { adminKey, origin } from "./helpers";

export async function call(path: string, init: { method?: string; json?: unknown; body?: Uint8Array; database?: string } = {}) {
  const headers: Record<string, string> = { "x-api-key": adminKey() };
  if (init.database) headers["x-quiver-database"] = init.database;
  let body: BodyInit | undefined;
  if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  } else if (init.body) {
    headers["content-type"] = "application/vnd.apache.arrow.stream";
    body = init.body as unknown as BodyInit;
  }
  const res = await fetch(origin() + path, { method: init.method ?? (body ? "POST" : "GET"), headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${text}`);
  return parsed as Record<string, unknown> & number;
}

export function rows(from: number, to: number, label = (i: number) => `item-${i}`) {
  const ids = Array.from({ length: to - from }, (_, i) => from + i);
  return tableToIPC(
    new Table({
      id: vectorFromArray(ids.map(BigInt), new Int64()),
      name: vectorFromArray(ids.map(label), new Utf8()),
      score: vectorFromArray(
        ids.map((i) => i / 2),
        new Float64(),
      ),
    }),
    "stream",
  );
}

/** Rows of a table as the query operation answers them (an Arrow file). */
export async function queryRows(table: string, query: Record<string, unknown> = {}): Promise<Table> {
  const res = await fetch(`${origin()}/v1/table/${table}/query`, {
    method: "POST",
    headers: { "x-api-key": adminKey(), "content-type": "application/json" },
    body: JSON.stringify({ limit: 100_000, ...query }),
  });
  if (!res.ok) throw new Error(`query of ${table} answered ${res.status}: ${await res.text()}`);
  return tableFromIPC(new Uint8Array(await res.arrayBuffer()));
}
