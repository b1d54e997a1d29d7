/**
 * What a binary value holds, told by its leading bytes (never by a name or type someone stored beside it): images,
 * audio, video and PDF the console can show, with the content type the media route answers.
 */
import type { JsonField } from "./arrow-schema";

export type MediaKind = "image" | "audio" | "video" | "pdf";

export interface MediaType {
  kind: MediaKind;
  mime: string;
  /** A file name extension for downloads. */
  extension: string;
}

/** Bytes of a value enough to tell what it holds (an SVG may open with an XML prolog and comments). */
export const MEDIA_SNIFF_BYTES = 512;

const ascii = (bytes: Uint8Array, start: number, length: number) => String.fromCharCode(...bytes.subarray(start, start + length));

const starts = (bytes: Uint8Array, signature: number[], at = 0) => signature.every((b, i) => bytes[at + i] === b);

const SVG = /^(\uFEFF)?\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE\s+svg[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i;

/** The ISO base media brands (MP4, M4A, AVIF): the box after `ftyp` names what the file is. */
function isoMedia(bytes: Uint8Array): MediaType | null {
  if (ascii(bytes, 4, 4) !== "ftyp") return null;
  const brand = ascii(bytes, 8, 4);
  if (brand === "avif" || brand === "avis") return { kind: "image", mime: "image/avif", extension: "avif" };
  if (brand === "M4A " || brand === "M4B ") return { kind: "audio", mime: "audio/mp4", extension: "m4a" };
  if (brand === "qt  ") return { kind: "video", mime: "video/quicktime", extension: "mov" };
  return { kind: "video", mime: "video/mp4", extension: "mp4" };
}

export function sniffMedia(bytes: Uint8Array): MediaType | null {
  if (starts(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { kind: "image", mime: "image/png", extension: "png" };
  if (starts(bytes, [0xff, 0xd8, 0xff])) return { kind: "image", mime: "image/jpeg", extension: "jpg" };
  if (ascii(bytes, 0, 4) === "GIF8") return { kind: "image", mime: "image/gif", extension: "gif" };
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return { kind: "image", mime: "image/webp", extension: "webp" };
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WAVE") return { kind: "audio", mime: "audio/wav", extension: "wav" };
  if (ascii(bytes, 0, 4) === "OggS") return { kind: "audio", mime: "audio/ogg", extension: "ogg" };
  if (ascii(bytes, 0, 4) === "fLaC") return { kind: "audio", mime: "audio/flac", extension: "flac" };
  if (ascii(bytes, 0, 3) === "ID3" || (bytes[0] === 0xff && bytes.length > 1 && (bytes[1] & 0xe0) === 0xe0 && (bytes[1] & 0x06) !== 0))
    return { kind: "audio", mime: "audio/mpeg", extension: "mp3" };
  if (starts(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return { kind: "video", mime: "video/webm", extension: "webm" };
  if (ascii(bytes, 0, 5) === "%PDF-") return { kind: "pdf", mime: "application/pdf", extension: "pdf" };
  const iso = isoMedia(bytes);
  if (iso) return iso;
  if (SVG.test(new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(0, MEDIA_SNIFF_BYTES))))
    return { kind: "image", mime: "image/svg+xml", extension: "svg" };
  return null;
}

export const hexHead = (bytes: Uint8Array, length = 16) => Array.from(bytes.subarray(0, length), (b) => b.toString(16).padStart(2, "0")).join("");

/** Lance's blob column: a struct the engine stores apart from the rows and reads on demand. */
export const isBlobColumn = (field: JsonField) => field.metadata?.["ARROW:extension:name"] === "lance.blob.v2";

/** Columns whose values are bytes: shown by what they hold, fetched a cell at a time, never whole in a page of rows. */
export const mediaColumnsOf = (fields: JsonField[]) =>
  fields.filter((f) => f.type.type === "binary" || f.type.type === "large_binary" || isBlobColumn(f)).map((f) => f.name);
