import Link from "next/link";
import { SERVICE_NAME, SERVICE_VERSION } from "@/lib/service";

export default function Home() {
  return (
    <main className="mx-auto max-w-2xl px-6 py-16">
      <h1 className="text-3xl font-semibold tracking-tight">{SERVICE_NAME}</h1>
      <p className="mt-1 text-sm text-slate-500" data-testid="version">
        version {SERVICE_VERSION}
      </p>
      <p className="mt-6 text-slate-700 dark:text-slate-300">
        A catalog for Lance tables: the Lance Namespace REST API over real Lance datasets.
      </p>
      <ul className="mt-6 space-y-2">
        <li>
          <Link className="text-indigo-600 underline hover:text-indigo-800" href="/docs">
            API reference
          </Link>
        </li>
        <li>
          <a className="text-indigo-600 underline hover:text-indigo-800" href="/v1/openapi.json">
            OpenAPI 3.1 document (JSON)
          </a>
        </li>
      </ul>
    </main>
  );
}
