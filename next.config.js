/** Headers every response carries, console and API alike; the console's Content-Security-Policy is set per request in proxy.ts. */
const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "same-origin" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()" },
];

/** @type {import('next').NextConfig} */
const nextConfig = {
  // The Lance engine, OpenDAL and DuckDB ship native addons, and the engine requires its own CommonJS apache-arrow;
  // prom-client keeps one registry per process and answers the cluster primary from it; OpenTelemetry keeps one
  // tracer provider per process, which the API registers and Next.js's own spans find.
  serverExternalPackages: [
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/resources",
    "@lancedb/lancedb",
    "@duckdb/node-api",
    "@duckdb/node-bindings",
    "apache-arrow",
    "opendal",
    "sharp",
    "@aws-sdk/client-sts",
    "google-auth-library",
    "prom-client",
    "pino",
    "pino-pretty",
  ],
  // API clients (LanceDB's remote client) neither expect nor follow redirects; both slash forms are routed.
  skipTrailingSlashRedirect: true,
  poweredByHeader: false,
  reactStrictMode: true,
  async headers() {
    return [
      { source: "/:path*", headers: securityHeaders },
      // API answers are data, never documents to render or frame. The media route sets its own, by what it serves.
      { source: "/v1/:path((?!table/[^/]+/media/?$).*)", headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }] },
      { source: "/api/:path*", headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }] },
      { source: "/healthz", headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }] },
      { source: "/readyz", headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }] },
      { source: "/metrics", headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }] },
    ];
  },
};
module.exports = nextConfig;
