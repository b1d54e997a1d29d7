"use client";
/** Chooses latest, a version or a tag; the choice lives in the address. */
import { useTags, useVersions } from "@/lib/queries/catalog";
import { Select } from "../ui/controls";

export function refOf(params: { version?: string | null; tag?: string | null }): { version?: number; tag?: string } {
  if (params.tag) return { tag: params.tag };
  if (params.version) return { version: Number(params.version) };
  return {};
}

export function VersionPicker({
  database,
  table,
  value,
  onChange,
  label,
  id,
  latestLabel = "latest",
}: {
  database: string;
  table: string[];
  value: string;
  onChange: (value: string) => void;
  label: string;
  id: string;
  /** What choosing nothing means here. */
  latestLabel?: string;
}) {
  const versions = useVersions(database, table);
  const tags = useTags(database, table);
  const list = versions.data?.pages.flatMap((p) => p.versions) ?? [];
  return (
    <label htmlFor={id} className="flex items-center gap-2 text-sm">
      <span className="text-slate-600 dark:text-slate-300">{label}</span>
      <Select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{latestLabel}</option>
        {Object.entries(tags.data?.tags ?? {}).map(([name, t]) => (
          <option key={`tag:${name}`} value={`tag:${name}`}>
            tag {name} (v{t.version})
          </option>
        ))}
        {list.map((v) => (
          <option key={v.version} value={`v:${v.version}`}>
            version {v.version}
          </option>
        ))}
      </Select>
    </label>
  );
}

/** `v:3` / `tag:x` / "" ↔ the address's `version` and `tag` parameters. */
export function pickerValue(version?: string | null, tag?: string | null): string {
  return tag ? `tag:${tag}` : version ? `v:${version}` : "";
}
export function fromPicker(value: string): { version?: string; tag?: string } {
  if (value.startsWith("tag:")) return { tag: value.slice(4) };
  if (value.startsWith("v:")) return { version: value.slice(2) };
  return {};
}
