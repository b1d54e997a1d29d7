"use client";
/** Editable key/value properties. */
import { Button, TextInput } from "./controls";

export type PropertyRows = Array<{ key: string; value: string }>;

export const toProperties = (rows: PropertyRows) => Object.fromEntries(rows.filter((r) => r.key.trim()).map((r) => [r.key.trim(), r.value]));

export function PropertiesEditor({ rows, onChange, idPrefix }: { rows: PropertyRows; onChange: (rows: PropertyRows) => void; idPrefix: string }) {
  return (
    <fieldset className="flex flex-col gap-2">
      <legend className="text-xs font-medium text-slate-600 dark:text-slate-300">Properties</legend>
      {rows.map((row, i) => (
        <div key={i} className="flex gap-2">
          <TextInput
            aria-label={`Property ${i + 1} name`}
            id={`${idPrefix}-key-${i}`}
            placeholder="name"
            value={row.key}
            onChange={(e) => onChange(rows.map((r, j) => (j === i ? { ...r, key: e.target.value } : r)))}
            className="w-1/3"
          />
          <TextInput
            aria-label={`Property ${i + 1} value`}
            placeholder="value"
            value={row.value}
            onChange={(e) => onChange(rows.map((r, j) => (j === i ? { ...r, value: e.target.value } : r)))}
            className="flex-1"
          />
          <Button type="button" variant="ghost" aria-label={`Remove property ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            ✕
          </Button>
        </div>
      ))}
      <div>
        <Button type="button" variant="secondary" onClick={() => onChange([...rows, { key: "", value: "" }])}>
          Add property
        </Button>
      </div>
    </fieldset>
  );
}

export function PropertiesTable({ properties }: { properties: Record<string, string> | null | undefined }) {
  const entries = Object.entries(properties ?? {});
  if (entries.length === 0) return <p className="text-sm text-slate-500">No properties.</p>;
  return (
    <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
      {entries.map(([k, v]) => (
        <div key={k} className="contents">
          <dt className="font-mono text-slate-600 dark:text-slate-400">{k}</dt>
          <dd className="break-all">{v}</dd>
        </div>
      ))}
    </dl>
  );
}
