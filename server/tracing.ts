/**
 * OpenTelemetry traces of the API's requests, exported over OTLP/HTTP when the standard variables ask for them: an
 * endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), unless `OTEL_TRACES_EXPORTER`
 * names no `otlp` or `OTEL_SDK_DISABLED` is true; the exporter reads its headers, timeout and compression from the
 * same variables. Without them nothing is set up and a traced step costs one check of a flag. Spans are sent in batches
 * (`OTEL_BSP_SCHEDULE_DELAY`, 5 s by default): those of the last moments before a process stops may not be.
 *
 * A request's span (its operation, `x-request-id`, database, table and status) holds the phases its `Server-Timing`
 * names (auth, queue, body, work, record), and within them the write ledger's records, the engine's calls and Quiver's
 * own requests to the store.
 */
import "server-only";
import { SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { SERVICE_VERSION } from "@/lib/service";
import { INSTANCE } from "./instance";

// Next may load this module more than once (one copy per route bundle): whether tracing is on is the process's.
const state = globalThis as typeof globalThis & { quiverTracing?: { provider: unknown } };

/** Whether the standard OpenTelemetry variables ask for traces to be exported over OTLP. */
export function tracingWanted(env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === "true") return false;
  const exporters = (env.OTEL_TRACES_EXPORTER || "otlp").split(",").map((e) => e.trim());
  return exporters.includes("otlp") && Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** Sets up the export of this process's spans, where the variables ask for it. */
export async function startTracing(): Promise<void> {
  if (state.quiverTracing || !tracingWanted()) return;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      "service.name": process.env.OTEL_SERVICE_NAME || "quiver",
      "service.version": SERVICE_VERSION,
      "service.instance.id": INSTANCE,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  state.quiverTracing = { provider };
}

const tracer = () => trace.getTracer("quiver");

/**
 * Runs `work` in a span of its own, the parent of the spans made within it; as it is, when tracing is off (its
 * attributes, given as a function, are then not even made).
 */
export function traced<T>(name: string, attributes: Attributes | (() => Attributes), work: (span?: Span) => Promise<T>): Promise<T> {
  if (!state.quiverTracing) return work();
  return tracer().startActiveSpan(name, { attributes: typeof attributes === "function" ? attributes() : attributes }, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message?.split("\n")[0] });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span for a step that has already run, from `start` to now (`performance.now()` times). */
export function tracedSince(name: string, start: number): void {
  if (!state.quiverTracing) return;
  tracer()
    .startSpan(name, { startTime: performance.timeOrigin + start })
    .end();
}
