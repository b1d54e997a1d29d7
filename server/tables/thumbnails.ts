/**
 * Small pictures of image values for the data grid, so a page of large images costs the browser a few kilobytes a
 * cell. SVG is drawn by libvips (through sharp), which runs none of the document's scripts.
 */
import "server-only";
import sharp from "sharp";
import { invalidInput } from "@/server/errors";
import type { MediaType } from "@/lib/media";

export async function thumbnail(bytes: Uint8Array, media: MediaType | null, size: number): Promise<Uint8Array> {
  if (media?.kind !== "image") throw invalidInput(`a thumbnail is made of an image; this value is ${media ? media.mime : "not media"}`);
  try {
    // The first frame of an animation; never larger than the value itself.
    return await sharp(bytes, { animated: false, limitInputPixels: 100_000_000 })
      .rotate()
      .resize(size, size, { fit: "inside", withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
  } catch (err) {
    throw invalidInput(`the image cannot be read to make a thumbnail: ${err instanceof Error ? err.message : String(err)}`);
  }
}
