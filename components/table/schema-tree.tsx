"use client";
import type { JsonField } from "@/lib/arrow-schema";
import { typeLabel } from "@/lib/schema-diff";
import { Badge } from "../ui/controls";

function FieldRow({ field, depth }: { field: JsonField; depth: number }) {
  const children =
    field.type.type === "struct" ? (field.type.fields ?? []) : field.type.fields?.[0]?.type.type === "struct" ? (field.type.fields[0].type.fields ?? []) : [];
  return (
    <>
      <tr className="border-t border-slate-100 dark:border-slate-800" data-testid="schema-field">
        <td className="py-1.5 pr-4 font-mono text-sm" style={{ paddingLeft: `${depth * 1.25}rem` }}>
          {depth > 0 && <span className="mr-1 text-slate-400">└</span>}
          {field.name}
        </td>
        <td className="pr-4 font-mono text-sm text-indigo-700 dark:text-indigo-300">{typeLabel(field.type)}</td>
        <td className="pr-4">{field.nullable ? <Badge>nullable</Badge> : <Badge tone="indigo">required</Badge>}</td>
        <td className="font-mono text-xs text-slate-500">
          {field.metadata
            ? Object.entries(field.metadata)
                .map(([k, v]) => `${k}=${v}`)
                .join(", ")
            : ""}
        </td>
      </tr>
      {children.map((c) => (
        <FieldRow key={c.name} field={c} depth={depth + 1} />
      ))}
    </>
  );
}

export function SchemaTree({ fields }: { fields: JsonField[] }) {
  return (
    <table className="w-full text-left">
      <thead className="text-xs uppercase text-slate-500">
        <tr>
          <th className="py-2 pr-4">Field</th>
          <th className="pr-4">Type</th>
          <th className="pr-4">Nullability</th>
          <th>Metadata</th>
        </tr>
      </thead>
      <tbody>
        {fields.map((f) => (
          <FieldRow key={f.name} field={f} depth={0} />
        ))}
      </tbody>
    </table>
  );
}
