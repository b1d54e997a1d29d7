"use client";
import { useDatabase } from "@/lib/use-database";
import { NamespaceTree } from "./namespace-tree";
import { NamespaceView } from "./namespace-view";
import { joinIdentifier } from "@/lib/identifiers";

export function NamespacePage({ namespace }: { namespace: string[] }) {
  const database = useDatabase();
  return (
    <>
      <NamespaceTree database={database} shown={{ path: namespace, kind: "namespace" }} />
      <NamespaceView key={`${database}:${joinIdentifier(namespace)}`} database={database} namespace={namespace} />
    </>
  );
}
