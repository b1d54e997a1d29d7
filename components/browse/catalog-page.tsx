"use client";
import { useDatabase } from "@/lib/use-database";
import { NamespaceTree } from "./namespace-tree";
import { NamespaceView } from "./namespace-view";

export function NamespacePage({ namespace }: { namespace: string[] }) {
  const database = useDatabase();
  return (
    <>
      <NamespaceTree database={database} current={namespace} />
      <NamespaceView key={`${database}:${namespace.join("$")}`} database={database} namespace={namespace} />
    </>
  );
}
