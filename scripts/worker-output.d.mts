// Types of what the tests use of worker-output.mjs.
export function engineLogLine(pid: number, line: string): string | null;
