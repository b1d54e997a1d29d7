/**
 * A table of media for the tests: real PNG and JPEG pictures (made with sharp), a WAV and an MP4 (made with ffmpeg,
 * test/fixtures/media/README.md), an SVG that carries a script, bytes that are nothing in particular, and a null;
 * and a Lance blob column (`lance.blob.v2`) holding a picture and a large value.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  Binary,
  Field,
  FixedSizeList,
  Float32,
  Int64,
  LargeBinary,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from "apache-arrow";
import sharp from "sharp";

const fixture = (name: string) => new Uint8Array(readFileSync(path.join(__dirname, "fixtures", "media", name)));

export const SVG_WITH_SCRIPT = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><script>window.__svgRan = true; fetch("/v1/whoami?from=svg");</script><rect width="20" height="10" fill="#0a0"/></svg>`;

export interface MediaValues {
  png: Uint8Array;
  jpeg: Uint8Array;
  wav: Uint8Array;
  mp4: Uint8Array;
  svg: Uint8Array;
  other: Uint8Array;
  large: Uint8Array;
}

export async function mediaValues(): Promise<MediaValues> {
  const picture = (width: number, height: number, background: string) => sharp({ create: { width, height, channels: 3, background } });
  return {
    png: new Uint8Array(await picture(40, 30, "#3366ff").png().toBuffer()),
    jpeg: new Uint8Array(await picture(64, 48, "#ff9900").jpeg().toBuffer()),
    wav: fixture("tone.wav"),
    mp4: fixture("clip.mp4"),
    svg: new TextEncoder().encode(SVG_WITH_SCRIPT),
    other: Uint8Array.from({ length: 40 }, (_, i) => (i * 37) % 256),
    large: Uint8Array.from({ length: 2 * 1024 * 1024 }, (_, i) => i % 251),
  };
}

/**
 * Rows 0-6: png, jpeg, wav, mp4, svg, other bytes, null in `media`; the blob column holds the png in row 0 and 2 MiB
 * in row 1; `embedding` is [id, 1], so row 0's nearest rows are rows 1, 2, …
 */
export function mediaTable(values: MediaValues): Uint8Array {
  const kinds = ["png", "jpeg", "wav", "mp4", "svg", "other", null] as const;
  const blobType = new Struct([new Field("data", new LargeBinary(), true), new Field("uri", new Utf8(), true)]);
  const schema = new Schema([
    new Field("id", new Int64(), false),
    new Field("kind", new Utf8(), true),
    new Field("media", new Binary(), true),
    new Field("attachment", blobType, true, new Map([["ARROW:extension:name", "lance.blob.v2"]])),
    new Field("embedding", new FixedSizeList(2, new Field("item", new Float32(), true)), true),
  ]);
  const blobs = kinds.map((_, i) => (i === 0 ? { data: values.png, uri: null } : i === 1 ? { data: values.large, uri: null } : null));
  const children = [
    vectorFromArray(
      kinds.map((_, i) => BigInt(i)),
      new Int64(),
    ),
    vectorFromArray(
      kinds.map((k) => k ?? "null"),
      new Utf8(),
    ),
    vectorFromArray(
      kinds.map((k) => (k ? values[k] : null)),
      new Binary(),
    ),
    vectorFromArray(blobs, blobType),
    vectorFromArray(
      kinds.map((_, i) => [i, 1]),
      new FixedSizeList(2, new Field("item", new Float32(), true)),
    ),
  ].map((v) => v.data[0]);
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: kinds.length, nullCount: 0, children }));
  return tableToIPC(new Table([batch]), "stream");
}
