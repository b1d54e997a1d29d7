import { describe, expect, it } from "vitest";
import { mediaColumnsOf, sniffMedia } from "./media";

const bytes = (...parts: Array<string | number[]>) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? Array.from(p, (c) => c.charCodeAt(0)) : p)));

describe("what a value's leading bytes say it is", () => {
  it("knows the images, sounds, films and documents the console shows", () => {
    const cases: Array<[Uint8Array, string | null]> = [
      [bytes([0x89], "PNG\r\n", [0x1a, 0x0a]), "image/png"],
      [bytes([0xff, 0xd8, 0xff, 0xe0]), "image/jpeg"],
      [bytes("GIF89a"), "image/gif"],
      [bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 "), "image/webp"],
      [bytes([0, 0, 0, 0x1c], "ftypavif"), "image/avif"],
      [bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "), "audio/wav"],
      [bytes("ID3", [4, 0]), "audio/mpeg"],
      [bytes([0xff, 0xfb, 0x90, 0x44]), "audio/mpeg"],
      [bytes("OggS", [0]), "audio/ogg"],
      [bytes("fLaC"), "audio/flac"],
      [bytes([0, 0, 0, 0x20], "ftypM4A "), "audio/mp4"],
      [bytes([0, 0, 0, 0x20], "ftypisom"), "video/mp4"],
      [bytes([0x1a, 0x45, 0xdf, 0xa3]), "video/webm"],
      [bytes("%PDF-1.7"), "application/pdf"],
      [bytes('<?xml version="1.0"?>\n<!-- drawn -->\n<svg xmlns="http://www.w3.org/2000/svg">'), "image/svg+xml"],
      [bytes("  <svg>"), "image/svg+xml"],
      [bytes("<html><svg>"), null],
      [bytes([0xff, 0xe0]), null],
      [bytes("plain text"), null],
      [new Uint8Array(0), null],
    ];
    for (const [value, mime] of cases) expect(sniffMedia(value)?.mime ?? null).toBe(mime);
  });

  it("takes binary, large binary and Lance blob columns as media columns", () => {
    const fields = [
      { name: "a", type: { type: "binary" }, nullable: true },
      { name: "b", type: { type: "large_binary" }, nullable: true },
      { name: "c", type: { type: "struct", fields: [] }, nullable: true, metadata: { "ARROW:extension:name": "lance.blob.v2" } },
      { name: "d", type: { type: "string" }, nullable: true },
    ];
    expect(mediaColumnsOf(fields)).toEqual(["a", "b", "c"]);
  });
});
