/** @type {import('next').NextConfig} */
const nextConfig = {
  // The Lance engine ships a native addon and requires its own CommonJS apache-arrow.
  serverExternalPackages: ["@lancedb/lancedb", "apache-arrow"],
  // API clients (LanceDB's remote client) neither expect nor follow redirects; both slash forms are routed.
  skipTrailingSlashRedirect: true,
  poweredByHeader: false,
  reactStrictMode: true,
};
module.exports = nextConfig;
