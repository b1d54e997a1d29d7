/**
 * OpenTelemetry traces over OTLP/HTTP: a server given the standard variables sends each request's spans to the
 * collector they name (here a receiver in the test), the request's id on its span, and the phases, the write
 * ledger, the engine's calls and the store's requests within it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tableToIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rows, until } from "./client";
import { startServer, type TestServer } from "./server";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
}
interface OtlpExport {
  resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: OtlpValue }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

const exports: OtlpExport[] = [];
let collector: http.Server;
let server: TestServer;

const attribute = (span: { attributes: OtlpSpan["attributes"] }, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : undefined);
};
const spans = () => exports.flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.url === "/v1/traces") exports.push(JSON.parse(body) as OtlpExport);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const { port } = collector.address() as AddressInfo;
  server = await startServer({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_SERVICE_NAME: "quiver-under-test",
  });
});
afterAll(async () => {
  await server?.stop();
  collector?.close();
});

describe("traces over OTLP", () => {
  it("sends a write's span with its request id, and within it the phases, the ledger, the engine and the store", async () => {
    const create = await fetch(`${server.url}/v1/table/traced/create`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/vnd.apache.arrow.stream" },
      body: Buffer.from(tableToIPC(rows(0, 10), "stream")),
    });
    expect(create.status).toBe(200);
    const insert = await fetch(`${server.url}/v1/table/traced/insert`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/vnd.apache.arrow.stream", "x-request-id": "trace-me-0001" },
      body: Buffer.from(tableToIPC(rows(10, 20), "stream")),
    });
    expect(insert.status).toBe(200);

    const request = await until(
      "the insert's span at the collector",
      async () => spans().find((s) => attribute(s, "quiver.request_id") === "trace-me-0001" && s.name === "POST InsertIntoTable"),
      Boolean,
      20_000,
      100,
    );
    expect(attribute(request!, "quiver.operation")).toBe("InsertIntoTable");
    expect(attribute(request!, "quiver.target")).toBe("traced");
    expect(attribute(request!, "http.response.status_code")).toBe(200);
    const resource = exports.flatMap((e) => e.resourceSpans).find((r) => r.scopeSpans.some((s) => s.spans.includes(request!)))!.resource;
    expect(attribute(resource, "service.name")).toBe("quiver-under-test");

    // Its spans come in the same export or the next; each names its parent.
    const within = (name: string) => spans().find((s) => s.traceId === request!.traceId && s.name === name);
    const names = ["auth", "queue", "body", "work", "record", "write ledger: same-body look", "write ledger: claim", "engine: insert", "write ledger: answer"];
    await until("the insert's spans", async () => names.every(within), Boolean, 20_000, 100);
    const byId = new Map(spans().map((s) => [s.spanId, s]));
    const ancestors = (span: OtlpSpan) => {
      const chain: string[] = [];
      for (let s = byId.get(span.parentSpanId ?? ""); s; s = byId.get(s.parentSpanId ?? "")) chain.push(s.name);
      return chain;
    };
    expect(ancestors(within("work")!)).toContain("POST InsertIntoTable");
    expect(ancestors(within("write ledger: claim")!)).toEqual(expect.arrayContaining(["work", "POST InsertIntoTable"]));
    expect(ancestors(within("engine: insert")!)).toEqual(expect.arrayContaining(["work", "POST InsertIntoTable"]));
    expect(ancestors(within("write ledger: answer")!)).toEqual(expect.arrayContaining(["record", "POST InsertIntoTable"]));
    // Quiver's own store requests: the claim written, as a child of the claim's span.
    const claimWrite = spans().find(
      (s) => s.traceId === request!.traceId && s.name === "store: putIfAbsent" && String(attribute(s, "quiver.store.key")).endsWith(".claim"),
    );
    expect(claimWrite && ancestors(claimWrite)[0]).toBe("write ledger: claim");
  });
});
