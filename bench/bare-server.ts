/**
 * The baseline for metadata calls under load: the same catalog calls Quiver's API makes, behind a bare Node
 * `http` server with no routing, validation, auth or audit. Bundled and started by bench/run.mjs.
 */
import { createServer } from "node:http";
import { openDatabase } from "../server/databases";
import { parseRoot, parseStorageOptions } from "../server/storage/root";

const port = Number(process.env.PORT);
const { catalog, tables } = await openDatabase(parseRoot(process.env.QUIVER_ROOT!), parseStorageOptions(process.env.QUIVER_STORAGE_OPTIONS));

async function answer(url: string): Promise<unknown> {
  if (url.startsWith("/describe/")) {
    const d = await tables.describe(url.slice("/describe/".length).split("$"), {});
    return { version: d.version, schema: d.schema, location: catalog.location(d.entry) };
  }
  const page = await catalog.listNamespaces([], undefined, 100);
  return { namespaces: page.items };
}

createServer((req, res) => {
  answer(req.url ?? "/").then(
    (body) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body)),
    (err: unknown) => res.writeHead(500).end(String(err)),
  );
}).listen(port, "127.0.0.1", () => console.log("ready"));
