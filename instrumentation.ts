/**
 * Next.js calls register() once as each server process starts. The start itself is Node-only (server/startup.ts);
 * imported inside this very test of NEXT_RUNTIME, it is left out of the Edge runtime's build, which cannot compile it.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startServer } = await import("./server/startup");
    await startServer();
  }
}
