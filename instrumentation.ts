/**
 * Runs once when the server starts: lets API handlers read request bodies from Node's own request, opens the
 * default database, makes the console's session secret (so that no request, refused ones included, is what first
 * writes it), and issues the first admin key if none exists.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { captureNodeRequests } = await import("./server/http/body-source");
  captureNodeRequests();
  const { defaultCatalog } = await import("./server/catalogs");
  const { access } = await import("./server/auth/access");
  const { sessionSecret } = await import("./server/auth/session");
  await defaultCatalog();
  await sessionSecret();
  const key = await access().bootstrap();
  if (key) {
    console.log(
      [
        "",
        "Quiver created the first admin API key. It is shown this once; only its hash is kept.",
        `  ${key}`,
        "Use it as the x-api-key header, or sign in to the console with it as an access key.",
        "",
      ].join("\n"),
    );
  }
}
