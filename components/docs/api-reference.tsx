/** Renders an OpenAPI document for people: operations grouped by tag, with parameters, bodies and responses. */

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  parameters: Array<{ name: string; in: string; required: boolean; description?: string }>;
  requestBody?: { content: Record<string, { schema: unknown }>; description?: string };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}

interface Document {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
}

function Schema({ value }: { value: unknown }) {
  return <pre className="mt-1 max-h-72 overflow-auto rounded bg-slate-100 p-2 text-xs dark:bg-slate-900">{JSON.stringify(value, null, 2)}</pre>;
}

export function ApiReference({ document }: { document: unknown }) {
  const doc = document as Document;
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const groups = [...new Set(operations.map((o) => o.op.tags[0]))];
  return (
    <main className="mx-auto max-w-5xl px-6 py-10">
      <h1 className="text-2xl font-semibold">{doc.info.title}</h1>
      <p className="text-sm text-slate-500">version {doc.info.version}</p>
      <p className="mt-3 text-slate-700 dark:text-slate-300">{doc.info.description}</p>
      <nav aria-label="Groups" className="mt-4 flex flex-wrap gap-3 text-sm">
        {groups.map((g) => (
          <a key={g} href={`#${g.replace(/\W+/g, "-")}`} className="text-indigo-600 underline">
            {g}
          </a>
        ))}
      </nav>
      {groups.map((group) => (
        <section key={group} id={group.replace(/\W+/g, "-")} className="mt-10">
          <h2 className="border-b border-slate-200 pb-1 text-xl font-semibold dark:border-slate-800">{group}</h2>
          {operations
            .filter((o) => o.op.tags[0] === group)
            .map(({ path, method, op }) => (
              <details key={`${method} ${path}`} className="mt-3 rounded border border-slate-200 p-3 dark:border-slate-800">
                <summary className="cursor-pointer">
                  <span className="mr-2 inline-block w-16 rounded bg-slate-800 px-1 text-center font-mono text-xs uppercase text-white">{method}</span>
                  <code className="font-mono text-sm">{path}</code>
                  <span className="ml-3 text-sm text-slate-600 dark:text-slate-400">{op.summary}</span>
                </summary>
                {op.parameters.length > 0 && (
                  <table className="mt-3 w-full text-left text-sm">
                    <thead>
                      <tr className="text-slate-500">
                        <th className="pr-4 font-medium">Parameter</th>
                        <th className="pr-4 font-medium">In</th>
                        <th className="font-medium">Description</th>
                      </tr>
                    </thead>
                    <tbody>
                      {op.parameters.map((p) => (
                        <tr key={`${p.in}-${p.name}`}>
                          <td className="pr-4 font-mono">
                            {p.name}
                            {p.required ? " *" : ""}
                          </td>
                          <td className="pr-4">{p.in}</td>
                          <td>{p.description}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
                {op.requestBody &&
                  Object.entries(op.requestBody.content).map(([type, { schema }]) => (
                    <div key={type} className="mt-3 text-sm">
                      Request body <code>{type}</code>
                      {op.requestBody?.description ? ` — ${op.requestBody.description}` : ""}
                      {type === "application/json" && <Schema value={schema} />}
                    </div>
                  ))}
                {Object.entries(op.responses).map(([status, r]) => (
                  <div key={status} className="mt-3 text-sm">
                    Response <strong>{status}</strong>: {r.description}
                    {r.content?.["application/json"] && status !== "default" && <Schema value={r.content["application/json"].schema} />}
                  </div>
                ))}
              </details>
            ))}
        </section>
      ))}
    </main>
  );
}
