"use client";
/**
 * Binary values by what they hold: in the grid an image is a thumbnail of a few kilobytes, audio and video are players
 * that fetch nothing until played, a PDF is a link, anything else its size and first bytes; in a row's detail view
 * each at full size, with a download.
 */
import { useEffect, useMemo } from "react";
import { hexHead, sniffMedia } from "@/lib/media";
import { mediaUrl, type CellAddress, type CellSummary } from "@/lib/queries/media";
import { formatBytes } from "./format";

const THUMBNAIL_PIXELS = 96;

const describe = (summary: CellSummary) => `${summary.media?.mime ?? "bytes"}, ${formatBytes(summary.size ?? 0)}`;

function Bytes({ summary }: { summary: CellSummary }) {
  return (
    <span className="whitespace-nowrap" title={describe(summary)}>
      {formatBytes(summary.size ?? 0)}
      {summary.head ? ` · 0x${summary.head}…` : ""}
    </span>
  );
}

export function MediaCell({ summary, at, onOpen }: { summary: CellSummary | undefined; at: CellAddress; onOpen: () => void }) {
  if (!summary) return <span className="text-slate-400">…</span>;
  if (summary.size === null) return <span>null</span>;
  const label = `${at.column} of row ${at.rowId}`;
  switch (summary.media?.kind) {
    case "image":
      return (
        <button
          type="button"
          onClick={onOpen}
          title={`Open the row (${describe(summary)})`}
          className="block rounded focus-visible:outline-2 focus-visible:outline-indigo-500"
        >
          {/* eslint-disable-next-line @next/next/no-img-element -- a thumbnail the API makes, not a page asset */}
          <img
            src={mediaUrl(at, { thumbnail: THUMBNAIL_PIXELS })}
            alt={label}
            loading="lazy"
            className="max-h-12 max-w-24 object-contain"
            data-testid="media-thumbnail"
          />
        </button>
      );
    case "audio":
      return <audio controls preload="none" src={mediaUrl(at)} aria-label={label} className="h-8 w-56" data-testid="media-audio" />;
    case "video":
      return <video controls preload="none" src={mediaUrl(at)} aria-label={label} className="h-16 max-w-40" data-testid="media-video" />;
    case "pdf":
      return (
        <a href={mediaUrl(at)} target="_blank" rel="noopener noreferrer" className="whitespace-nowrap text-indigo-600 underline dark:text-indigo-300">
          PDF · {formatBytes(summary.size)}
        </a>
      );
    case undefined:
      return <Bytes summary={summary} />;
  }
}

/** A value at full size in a row's detail view, with a link that saves it. */
export function MediaValue({ summary, at }: { summary: CellSummary | undefined; at: CellAddress }) {
  if (!summary) return <span className="text-slate-400">…</span>;
  if (summary.size === null) return <span className="font-mono text-xs">null</span>;
  const label = `${at.column} of row ${at.rowId}`;
  const download = (
    <a href={mediaUrl(at, { download: true })} download className="text-xs text-indigo-600 underline dark:text-indigo-300">
      Download ({describe(summary)})
    </a>
  );
  let shown;
  switch (summary.media?.kind) {
    case "image":
      // eslint-disable-next-line @next/next/no-img-element -- a stored value, not a page asset
      shown = <img src={mediaUrl(at)} alt={label} className="max-h-[60vh] max-w-full object-contain" data-testid="media-full" />;
      break;
    case "audio":
      shown = <audio controls preload="metadata" src={mediaUrl(at)} aria-label={label} className="w-full" data-testid="media-player" />;
      break;
    case "video":
      shown = <video controls preload="metadata" src={mediaUrl(at)} aria-label={label} className="max-h-[60vh] max-w-full" data-testid="media-player" />;
      break;
    case "pdf":
      shown = (
        <a href={mediaUrl(at)} target="_blank" rel="noopener noreferrer" className="text-indigo-600 underline dark:text-indigo-300">
          Open the PDF
        </a>
      );
      break;
    case undefined:
      shown = <Bytes summary={summary} />;
  }
  return (
    <div className="flex flex-col items-start gap-1">
      {shown}
      {download}
    </div>
  );
}

/**
 * A binary value that came with its rows (a SQL result): what it holds, from its own bytes, shown from a local object
 * URL (an image as a thumbnail, audio and video as players), or its size and first bytes.
 */
export function InlineMedia({ bytes, label, full = false }: { bytes: Uint8Array; label: string; full?: boolean }) {
  const media = useMemo(() => sniffMedia(bytes), [bytes]);
  const url = useMemo(() => (media ? URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: media.mime })) : null), [bytes, media]);
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);
  const summary = { size: bytes.length, head: hexHead(bytes, 8), media } as CellSummary;
  if (!media || !url) return <Bytes summary={summary} />;
  switch (media.kind) {
    case "image":
      return (
        // eslint-disable-next-line @next/next/no-img-element -- a value of the result, not a page asset
        <img
          src={url}
          alt={label}
          className={full ? "max-h-[60vh] max-w-full object-contain" : "max-h-12 max-w-24 object-contain"}
          data-testid="media-thumbnail"
        />
      );
    case "audio":
      return <audio controls preload="metadata" src={url} aria-label={label} className={full ? "w-full" : "h-8 w-56"} />;
    case "video":
      return <video controls preload="metadata" src={url} aria-label={label} className={full ? "max-h-[60vh] max-w-full" : "h-16 max-w-40"} />;
    case "pdf":
      return (
        <a href={url} target="_blank" rel="noopener noreferrer" className="whitespace-nowrap text-indigo-600 underline dark:text-indigo-300">
          PDF · {formatBytes(bytes.length)}
        </a>
      );
  }
}
