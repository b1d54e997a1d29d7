/**
 * The console's media routes over a real table: what each binary and blob cell holds without its value, a value
 * served with the type its bytes say and the headers that keep it inert, byte ranges, thumbnails, and access.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Field, Int64, LargeBinary, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, vectorFromArray } from "apache-arrow";
import * as lancedb from "@lancedb/lancedb";
import sharp from "sharp";
import { client, expectError } from "./client";
import { mediaTable, mediaValues, type MediaValues } from "./media-table";
import { testStore } from "./store-server";
import { onObjectStore, startServer, uriOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;
let values: MediaValues;
/** Row id by the row's `id`. */
const rowIds = new Map<number, string>();

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
  values = await mediaValues();
  await api.post("/v1/namespace/m/create", {});
  await api.post("/v1/namespace/other/create", {});
  expect((await api.arrow("/v1/table/m$media/create", mediaTable(values))).status).toBe(200);
  const rows = (await api.post<Table>("/v1/table/m$media/query", { columns: ["id"], with_row_id: true, limit: 100 })).body;
  for (let r = 0; r < rows.numRows; r++) rowIds.set(Number(rows.getChild("id")!.get(r)), String(rows.getChild("_rowid")!.get(r)));
});
afterAll(() => server?.stop());

const media = (id: number, extra = "", column = "media") => `/v1/table/m$media/media?column=${column}&row_id=${rowIds.get(id)}&version=1${extra}`;
const fetchMedia = (path: string, headers: Record<string, string> = {}) => fetch(server.url + path, { headers: { ...server.auth, ...headers } });

describe("cells", () => {
  it("says what each binary and blob cell holds, by its leading bytes, without its value", async () => {
    const reply = await api.post<{
      cells: Array<{ row_id: string; column: string; size: number | null; media: { kind: string; mime: string } | null; head: string }>;
    }>("/v1/table/m$media/cells", { columns: ["media", "attachment"], row_ids: [...rowIds.values()], version: 1 });
    expect(reply.status).toBe(200);
    const cell = (id: number, column: string) => reply.body.cells.find((c) => c.row_id === rowIds.get(id) && c.column === column)!;
    // One summary per cell asked for.
    expect(reply.body.cells).toHaveLength(2 * rowIds.size);
    expect(cell(0, "media")).toMatchObject({ size: values.png.length, media: { kind: "image", mime: "image/png" }, head: "" });
    expect(cell(1, "media").media).toMatchObject({ kind: "image", mime: "image/jpeg" });
    expect(cell(2, "media").media).toMatchObject({ kind: "audio", mime: "audio/wav" });
    expect(cell(3, "media").media).toMatchObject({ kind: "video", mime: "video/mp4" });
    expect(cell(4, "media").media).toMatchObject({ kind: "image", mime: "image/svg+xml" });
    expect(cell(5, "media")).toMatchObject({ size: 40, media: null, head: "00254a6f94b9de03284d7297bce1062b" });
    expect(cell(6, "media")).toMatchObject({ size: null, media: null });
    expect(cell(0, "attachment")).toMatchObject({ size: values.png.length, media: { mime: "image/png" } });
    expect(cell(1, "attachment")).toMatchObject({ size: values.large.length, media: null });
    expect(cell(2, "attachment").size).toBeNull();
    // The answer holds no value: 2 MiB of blob and the pictures stay on the server.
    expect(JSON.stringify(reply.body).length).toBeLessThan(4000);
  });

  it("refuses a column that is not binary, a column that is not there, and a row id that is not a number", async () => {
    expectError(await api.post("/v1/table/m$media/cells", { columns: ["kind"], row_ids: ["0"] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/m$media/cells", { columns: ["nope"], row_ids: ["0"] }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/m$media/cells", { columns: ["media"], row_ids: ["-1"] }), 400, ErrorCode.InvalidInput);
  });
});

describe("a value", () => {
  it("is served whole with the type its bytes say, inline, inert and never sniffed", async () => {
    for (const [id, bytes, type] of [
      [0, values.png, "image/png"],
      [1, values.jpeg, "image/jpeg"],
      [2, values.wav, "audio/wav"],
      [3, values.mp4, "video/mp4"],
    ] as const) {
      const res = await fetchMedia(media(id));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("content-disposition")).toMatch(/^inline; filename="m_media-media-\d+\.\w+"$/);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    }
    const svg = await fetchMedia(media(4));
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(svg.headers.get("content-security-policy")).toContain("sandbox");
    expect(svg.headers.get("content-security-policy")).toContain("default-src 'none'");
    const other = await fetchMedia(media(5));
    expect(other.headers.get("content-type")).toBe("application/octet-stream");
    expect(other.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect((await fetchMedia(media(0, "&download=true"))).headers.get("content-disposition")).toMatch(/^attachment; filename=".*\.png"$/);
  });

  it("answers a byte range with 206, from a plain column and from a blob", async () => {
    const part = await fetchMedia(media(3), { range: "bytes=4-11" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 4-11/${values.mp4.length}`);
    expect(new TextDecoder().decode(await part.arrayBuffer())).toBe("ftypisom");
    const tail = await fetchMedia(media(1, "", "attachment"), { range: `bytes=${values.large.length - 10}-` });
    expect(tail.status).toBe(206);
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(values.large.subarray(values.large.length - 10));
    const whole = await fetchMedia(media(0, "", "attachment"));
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(values.png);
  });

  it("makes a small WebP thumbnail of an image, and refuses one of a sound", async () => {
    const res = await fetchMedia(media(1, "&thumbnail=32"));
    expect(res.headers.get("content-type")).toBe("image/webp");
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["webp", 32, 24]);
    const svg = await sharp(Buffer.from(await (await fetchMedia(media(4, "&thumbnail=64"))).arrayBuffer())).metadata();
    expect([svg.width, svg.height]).toEqual([20, 10]);
    expectError(await api.get(media(2, "&thumbnail=32")), 400, ErrorCode.InvalidInput);
    expectError(await api.get(media(0, "&thumbnail=5000")), 400, ErrorCode.InvalidInput);
  });

  it("is refused to a caller without access to the table, and to no one else's row id", async () => {
    const created = await api.post<{ key: string }>("/v1/admin/keys/create", {
      name: "elsewhere",
      role: "viewer",
      scope: { kind: "namespace", id: ["other"] },
    });
    const stranger = client(server.url, { "x-api-key": created.body.key });
    expectError(await stranger.get(media(0)), 403, ErrorCode.PermissionDenied);
    expectError(await stranger.post("/v1/table/m$media/cells", { columns: ["media"], row_ids: ["0"] }), 403, ErrorCode.PermissionDenied);
    expectError(await client(server.url).get(media(0)), 401, ErrorCode.Unauthenticated);
    expectError(await api.get(media(6)), 400, ErrorCode.InvalidInput);
    // The database named both ways, differently, is refused rather than one of them ignored; the same twice is fine.
    expectError(await api.get(`${media(0)}&database=default`, { "x-quiver-database": "other" }), 400, ErrorCode.InvalidInput);
    expect((await fetchMedia(`${media(0)}&database=default`, { "x-quiver-database": "default" })).status).toBe(200);
  });
});

describe("a column of Lance's first blob encoding", () => {
  it("says each value's size, and refuses to serve one with the reason, since the engine reads only where it lies", async () => {
    const storageOptions = onObjectStore ? testStore().storageOptions : {};
    const schema = new Schema([new Field("id", new Int64(), false), new Field("blob", new LargeBinary(), true, new Map([["lance-encoding:blob", "true"]]))]);
    const children = [vectorFromArray([0n], new Int64()), vectorFromArray([values.png], new LargeBinary())].map((v) => v.data[0]);
    const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 1, nullCount: 0, children }));
    // Written by the engine at the root as another tool would, in the file version that still takes the encoding.
    const db = await lancedb.connect(uriOf(server, ""), { storageOptions });
    const native = (db as unknown as { inner: { createTable(...args: unknown[]): Promise<unknown> } }).inner;
    await native.createTable("legacy", Buffer.from(tableToIPC(new Table([batch]), "file")), "create", null, {
      ...storageOptions,
      new_table_data_storage_version: "2.1",
    });
    const cells = await api.post<{ cells: Array<{ size: number | null; media: unknown }> }>("/v1/table/legacy/cells", { columns: ["blob"], row_ids: ["0"] });
    expect(cells.body.cells).toEqual([{ row_id: "0", column: "blob", size: values.png.length, media: null, head: "" }]);
    const refused = await api.get("/v1/table/legacy/media?column=blob&row_id=0");
    expectError(refused, 400, ErrorCode.InvalidInput);
    expect(refused.body.detail).toContain("lance.blob.v2");
  });
});
