"use client";
import { useState } from "react";
import { useUpdateSchemaMetadata } from "@/lib/queries/catalog";
import { Button, Field, TextInput } from "../ui/controls";
import { ErrorBanner } from "../ui/states";

/**
 * The schema's own metadata (key and value pairs beside the fields, which Lance and other tools read), and at the
 * latest version a form that sets a key: each change is a new version.
 */
export function SchemaMetadata({
  database,
  table,
  metadata,
  latest,
}: {
  database: string;
  table: string[];
  metadata: Record<string, string> | undefined;
  latest: boolean;
}) {
  const update = useUpdateSchemaMetadata(database, table);
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const entries = Object.entries(metadata ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section aria-label="Schema metadata" className="flex flex-col gap-3">
      <h3 className="text-sm font-semibold">Schema metadata</h3>
      {entries.length === 0 ? (
        <p className="text-sm text-slate-500">No schema metadata.</p>
      ) : (
        <table className="w-full text-left text-sm">
          <thead className="text-xs uppercase text-slate-500">
            <tr>
              <th className="py-2 pr-4">Key</th>
              <th>Value</th>
            </tr>
          </thead>
          <tbody>
            {entries.map(([k, v]) => (
              <tr key={k} className="border-t border-slate-100 align-top dark:border-slate-800" data-testid="schema-metadata-entry">
                <td className="py-1.5 pr-4 font-mono">{k}</td>
                <td className="font-mono text-xs break-all whitespace-pre-wrap text-slate-700 dark:text-slate-200">{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {latest && (
        <form
          aria-label="Set a schema metadata key"
          className="flex flex-wrap items-end gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            update.mutateAsync({ [key]: value }).then(
              () => (setKey(""), setValue("")),
              () => undefined,
            );
          }}
        >
          <Field label="Key" htmlFor="schema-metadata-key">
            <TextInput id="schema-metadata-key" value={key} onChange={(e) => setKey(e.target.value)} required />
          </Field>
          <Field label="Value" htmlFor="schema-metadata-value" hint="Setting a key makes a new version of the table">
            <TextInput id="schema-metadata-value" value={value} onChange={(e) => setValue(e.target.value)} />
          </Field>
          <Button type="submit" disabled={!key || update.isPending}>
            Set key
          </Button>
        </form>
      )}
      <ErrorBanner error={update.error} onDismiss={() => update.reset()} />
    </section>
  );
}
