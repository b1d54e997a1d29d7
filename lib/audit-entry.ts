/** One audit log entry, as the server records it and the console shows it. */
export interface AuditEntry {
  time: string;
  requestId: string;
  principal: { kind: string; id: string; name: string } | null;
  action: string;
  method: string;
  path: string;
  database: string;
  target: string | null;
  status: number;
  code: number | null;
  outcome: "ok" | "refused" | "failed";
  /** What an entry adds to its action: for vended credentials, their access and expiry. */
  detail?: string;
}
