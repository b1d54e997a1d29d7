/**
 * Credentials vended to clients that write a table's data themselves (the Lance REST namespace client writes the
 * dataset at the location a declare returns). Never the service's own secret: short-lived, read-only for readers,
 * and scoped as narrowly as the store allows.
 *
 * Azure: a service SAS signed with the configured account key, on the table's container (a blob-service SAS cannot
 * name a directory except on a hierarchical-namespace account, which Azurite does not emulate). S3 and GCS need a
 * role to assume or a token to downscope, which this version does not configure: their clients bring their own.
 */
import { createHmac } from "node:crypto";
import { openDalConfig } from "./cloud-store";
import type { DataRoot } from "./root";

export type Access = "read" | "write";

export interface VendedCredentials {
  storageOptions: Record<string, string>;
  expiresAtMillis: number;
}

const SAS_VERSION = "2021-08-06";
/** A few minutes of clock difference between Quiver and the store must not make a fresh token not yet valid. */
const CLOCK_SKEW_MS = 5 * 60_000;
const PERMISSIONS: Record<Access, string> = { read: "rl", write: "racwdl" };

const sasTime = (millis: number) => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A blob-service SAS for a container (`sr=c`), as its query string. */
export function containerSas(account: string, key: string, container: string, access: Access, startMillis: number, expiryMillis: number, httpsOnly: boolean): string {
  const fields = {
    sp: PERMISSIONS[access],
    st: sasTime(startMillis),
    se: sasTime(expiryMillis),
    spr: httpsOnly ? "https" : "",
    sv: SAS_VERSION,
    sr: "c",
  };
  const stringToSign = [
    fields.sp,
    fields.st,
    fields.se,
    `/blob/${account}/${container}`,
    "", // signed identifier
    "", // signed IP
    fields.spr,
    fields.sv,
    fields.sr,
    "", // snapshot time
    "", // encryption scope
    "", // rscc
    "", // rscd
    "", // rsce
    "", // rscl
    "", // rsct
  ].join("\n");
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(stringToSign, "utf8").digest("base64");
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value) query.set(name, value);
  query.set("sig", sig);
  return query.toString();
}

export class CredentialVendor {
  constructor(
    private readonly root: DataRoot,
    private readonly storageOptions: Record<string, string>,
    private readonly settings: { enabled: boolean; ttlMs: number },
  ) {}

  /** Whether this root can vend at all (an object store, vending on, and what the store needs to sign). */
  get available(): boolean {
    return this.settings.enabled && this.azureAccount() !== null;
  }

  /** The account name and key as the store itself reads them from the options and the environment. */
  private azureAccount(): { name: string; key: string } | null {
    if (this.root.kind !== "object" || this.root.cloud !== "az") return null;
    const { account_name: name, account_key: key } = openDalConfig(this.root, this.storageOptions).config;
    return name && key ? { name, key } : null;
  }

  /** Credentials for one table's location, or null when none can be vended (the client brings its own). */
  vend(access: Access, now = Date.now()): VendedCredentials | null {
    if (!this.settings.enabled || this.root.kind !== "object") return null;
    const account = this.azureAccount();
    if (!account) return null;
    const expiresAtMillis = now + this.settings.ttlMs;
    const httpsOnly = this.storageOptions.allow_http !== "true";
    const sas = containerSas(account.name, account.key, this.root.bucket, access, now - CLOCK_SKEW_MS, expiresAtMillis, httpsOnly);
    const storageOptions: Record<string, string> = {
      azure_storage_account_name: account.name,
      azure_storage_sas_token: sas,
      expires_at_millis: String(expiresAtMillis),
    };
    for (const passOn of ["azure_storage_endpoint", "allow_http", "azure_use_emulator"]) {
      if (this.storageOptions[passOn]) storageOptions[passOn] = this.storageOptions[passOn];
    }
    return { storageOptions, expiresAtMillis };
  }
}
