/**
 * The servers a test file started and has not stopped, so that a failed test can show what they logged
 * (setup-failures.ts). A module of its own, importing nothing of the server: a setup file that imported test/server.ts
 * would load the service's configuration before a test file sets the environment it reads.
 */
export interface RunningServer {
  url: string;
  pid: number;
  output: () => string;
}

export const runningServers = new Set<RunningServer>();
