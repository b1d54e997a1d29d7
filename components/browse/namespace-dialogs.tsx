"use client";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { STABLE_ROW_IDS } from "@/lib/contract/catalog";
import { useCreateNamespace, useDeclareTable, useDropNamespace, useDropTable, useEntries, useTable } from "@/lib/queries/catalog";
import { namespaceHref, tableHref } from "@/lib/console-links";
import { Button, Field, TextInput } from "../ui/controls";
import { Dialog } from "../ui/dialog";
import { PropertiesEditor, toProperties, type PropertyRows } from "../ui/properties-editor";
import { ErrorBanner } from "../ui/states";

const NAME = /^[A-Za-z0-9_.-]+$/;
const nameProblem = (name: string) => (!name ? "" : name === "." || name === ".." || !NAME.test(name) ? "Use letters, digits, '_', '-' and '.'" : "");

function CreateForm({ kind, database, namespace, onDone }: { kind: "namespace" | "table"; database: string; namespace: string[]; onDone: () => void }) {
  const router = useRouter();
  const [name, setName] = useState("");
  const [rows, setRows] = useState<PropertyRows>([]);
  const [stableRowIds, setStableRowIds] = useState(true);
  const createNamespace = useCreateNamespace(database, namespace);
  const declare = useDeclareTable(database, namespace);
  const mutation = kind === "namespace" ? createNamespace : declare;
  const problem = nameProblem(name);
  async function submit(e: React.FormEvent) {
    e.preventDefault();
    await mutation
      .mutateAsync({ name, properties: kind === "table" ? { ...toProperties(rows), [STABLE_ROW_IDS]: String(stableRowIds) } : toProperties(rows) })
      .then(() => {
        onDone();
        router.push(kind === "namespace" ? namespaceHref(database, [...namespace, name]) : tableHref(database, [...namespace, name]));
      })
      .catch(() => undefined);
  }
  return (
    <form onSubmit={submit} className="flex flex-col gap-4">
      <Field
        label={kind === "namespace" ? "Namespace name" : "Table name"}
        htmlFor={`${kind}-name`}
        hint={problem || (kind === "table" ? "Declaring records the table and reserves its location; the first insert writes its data." : undefined)}
      >
        <TextInput id={`${kind}-name`} value={name} onChange={(e) => setName(e.target.value)} autoFocus required aria-invalid={Boolean(problem)} />
      </Field>
      {kind === "table" && (
        <label className="flex items-start gap-2 text-sm">
          <input type="checkbox" className="mt-1" checked={stableRowIds} onChange={(e) => setStableRowIds(e.target.checked)} />
          <span>
            Stable row ids
            <span className="block text-xs text-slate-500">
              Rows keep their ids through updates and compactions and record the version that made and last changed them, so the Changes tab can show the rows
              each version inserted and updated. Chosen now or never.
            </span>
          </span>
        </label>
      )}
      <PropertiesEditor rows={rows} onChange={setRows} idPrefix={`${kind}-prop`} />
      <ErrorBanner error={mutation.error} />
      <div className="flex justify-end gap-2">
        <Button type="button" variant="secondary" onClick={onDone}>
          Cancel
        </Button>
        <Button type="submit" disabled={!name || Boolean(problem) || mutation.isPending}>
          {mutation.isPending ? "Saving…" : kind === "namespace" ? "Create namespace" : "Declare table"}
        </Button>
      </div>
    </form>
  );
}

export function CreateDialog({ kind, database, namespace }: { kind: "namespace" | "table"; database: string; namespace: string[] }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button variant={kind === "table" ? "primary" : "secondary"} onClick={() => setOpen(true)}>
        {kind === "namespace" ? "New namespace" : "Declare table"}
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title={kind === "namespace" ? "Create a namespace" : "Declare a table"}>
        <CreateForm kind={kind} database={database} namespace={namespace} onDone={() => setOpen(false)} />
      </Dialog>
    </>
  );
}

function TypeToConfirm({
  name,
  children,
  pending,
  error,
  onConfirm,
  onCancel,
  action,
}: {
  name: string;
  children: React.ReactNode;
  pending: boolean;
  error: unknown;
  onConfirm: () => void;
  onCancel: () => void;
  action: string;
}) {
  const [typed, setTyped] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (typed === name) onConfirm();
      }}
      className="flex flex-col gap-4"
    >
      <div className="text-sm">{children}</div>
      <Field label={`Type ${name} to confirm`} htmlFor="confirm-name">
        <TextInput id="confirm-name" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" autoFocus />
      </Field>
      <ErrorBanner error={error} />
      <div className="flex justify-end gap-2">
        <Button type="button" variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
        <Button type="submit" variant="danger" disabled={typed !== name || pending}>
          {pending ? "Dropping…" : action}
        </Button>
      </div>
    </form>
  );
}

export function DropNamespaceDialog({ database, namespace }: { database: string; namespace: string[] }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const drop = useDropNamespace(database, namespace);
  const tables = useEntries(database, namespace, "table", "");
  const children = useEntries(database, namespace, "namespace", "");
  const tableNames = tables.data?.pages.flatMap((p) => p.entries.map((e) => e.name)) ?? [];
  const namespaceNames = children.data?.pages.flatMap((p) => p.entries.map((e) => e.name)) ?? [];
  const more = tables.hasNextPage || children.hasNextPage;
  const name = namespace[namespace.length - 1];
  return (
    <>
      <Button variant="danger" onClick={() => setOpen(true)}>
        Drop namespace
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title={`Drop namespace ${name}`}>
        <TypeToConfirm
          name={name}
          action="Drop namespace"
          pending={drop.isPending}
          error={drop.error}
          onCancel={() => setOpen(false)}
          onConfirm={() =>
            drop.mutateAsync(namespaceNames.length + tableNames.length > 0).then(
              () => router.push(namespaceHref(database, namespace.slice(0, -1))),
              () => undefined,
            )
          }
        >
          {namespaceNames.length + tableNames.length === 0 ? (
            <p>The namespace is empty. Nothing else is deleted.</p>
          ) : (
            <>
              <p className="font-medium text-red-700 dark:text-red-300">
                This deletes {tableNames.length}
                {more ? "+" : ""} table(s) with all their data and {namespaceNames.length}
                {more ? "+" : ""} child namespace(s) with everything inside them:
              </p>
              <ul className="mt-2 max-h-40 overflow-auto font-mono text-xs" data-testid="drop-preview">
                {namespaceNames.map((n) => (
                  <li key={`ns-${n}`}>{n}/ (namespace)</li>
                ))}
                {tableNames.map((t) => (
                  <li key={`t-${t}`}>{t}</li>
                ))}
              </ul>
            </>
          )}
        </TypeToConfirm>
      </Dialog>
    </>
  );
}

export function DropTableDialog({ database, table }: { database: string; table: string[] }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const drop = useDropTable(database, table);
  const described = useTable(database, table);
  const name = table[table.length - 1];
  return (
    <>
      <Button variant="danger" onClick={() => setOpen(true)}>
        Drop table
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title={`Drop table ${name}`}>
        <TypeToConfirm
          name={name}
          action="Drop table"
          pending={drop.isPending}
          error={drop.error}
          onCancel={() => setOpen(false)}
          onConfirm={() =>
            drop.mutateAsync().then(
              () => router.push(namespaceHref(database, table.slice(0, -1))),
              () => undefined,
            )
          }
        >
          <p className="font-medium text-red-700 dark:text-red-300" data-testid="drop-preview">
            {described.data?.is_only_declared
              ? "This removes the declared table and its reserved location."
              : `This deletes all ${described.data?.stats?.num_rows ?? "?"} rows, every version (latest ${described.data?.version ?? "?"}) and every tag of this table.`}
          </p>
          <p className="mt-1 break-all text-xs text-slate-500">{described.data?.location}</p>
        </TypeToConfirm>
      </Dialog>
    </>
  );
}
