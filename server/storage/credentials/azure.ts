/**
 * Azure: a service SAS signed with the configured account key. On an account with a hierarchical namespace a SAS
 * can name a directory (`sr=d`), so it reaches one table; on any other account (Azurite included) the narrowest a
 * SAS can name is the container.
 */
import "server-only";
import { createHmac } from "node:crypto";
import { ConfigError } from "../../config-error";
import { sharedKeyAuthorization } from "../azure-container";
import { openDalConfig } from "../cloud-store";
import type { ObjectRoot } from "../root";
import { passedOn, type Access, type ScopedCredentials, type Vendor } from "./vendor";

const SAS_VERSION = "2021-08-06";
/** A few minutes of clock difference between Quiver and the store must not make a fresh token not yet valid. */
const CLOCK_SKEW_MS = 5 * 60_000;
const PERMISSIONS: Record<Access, string> = { read: "rl", write: "racwdl" };
/** Connection settings a client needs to reach the same account; none of them is a secret. */
const PASSED_ON = ["azure_storage_endpoint", "allow_http", "azure_use_emulator"];

const sasTime = (millis: number) => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z");

export interface SasRequest {
  account: string;
  key: string;
  container: string;
  /** A directory of a hierarchical-namespace account, without slashes at either end; absent for the container. */
  directory?: string;
  access: Access;
  startMillis: number;
  expiryMillis: number;
  httpsOnly: boolean;
}

/** A blob-service SAS for a container (`sr=c`) or, with `directory`, a directory (`sr=d`), as its query string. */
export function serviceSas(request: SasRequest): string {
  const { account, key, container, directory, access, startMillis, expiryMillis, httpsOnly } = request;
  const fields = {
    sp: PERMISSIONS[access],
    st: sasTime(startMillis),
    se: sasTime(expiryMillis),
    spr: httpsOnly ? "https" : "",
    sv: SAS_VERSION,
    sr: directory ? "d" : "c",
  };
  const resource = `/blob/${account}/${container}${directory ? `/${directory}` : ""}`;
  const stringToSign = [
    fields.sp,
    fields.st,
    fields.se,
    resource,
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
  // The depth of the directory is not signed, but the service needs it to know how far up the SAS reaches.
  if (directory) query.set("sdd", String(directory.split("/").length));
  query.set("sig", sig);
  return query.toString();
}

export class AzureSasVendor implements Vendor {
  private readonly account: { name: string; key: string; endpoint: string } | null;

  constructor(
    private readonly root: ObjectRoot,
    private readonly storageOptions: Record<string, string>,
    private readonly scope: "table" | "container",
    private readonly ttlMs: number,
  ) {
    const { account_name: name, account_key: key, endpoint } = openDalConfig(root, storageOptions).config;
    this.account = name && key && endpoint ? { name, key, endpoint } : null;
  }

  async check(): Promise<void> {
    if (!this.account) {
      throw new ConfigError(
        "QUIVER_VEND_CREDENTIALS: vending on az:// signs SAS tokens with the account key; set azure_storage_account_name and azure_storage_account_key (QUIVER_STORAGE_OPTIONS or AZURE_STORAGE_ACCOUNT_NAME/KEY)",
      );
    }
    if (this.scope === "table" && !(await this.hierarchicalNamespace())) {
      throw new ConfigError(
        `QUIVER_VEND_CREDENTIALS=table: account '${this.account.name}' has no hierarchical namespace, so a SAS cannot be limited to one table's directory; use 'container' (a SAS on the whole container) or 'off'`,
      );
    }
  }

  /** Whether the account has a hierarchical namespace, as Get Account Information says. */
  private async hierarchicalNamespace(): Promise<boolean> {
    const { name, key, endpoint } = this.account!;
    const url = new URL(`${endpoint.replace(/\/+$/, "")}/?restype=account&comp=properties`);
    const headers: Record<string, string> = { "x-ms-date": new Date().toUTCString(), "x-ms-version": SAS_VERSION };
    const res = await fetch(url, {
      headers: { ...headers, authorization: sharedKeyAuthorization(name, key, "GET", url, headers) },
      signal: AbortSignal.timeout(15_000),
    });
    if (!res.ok) throw new Error(`asking account '${name}' whether it has a hierarchical namespace answered ${res.status}`);
    return res.headers.get("x-ms-is-hns-enabled") === "true";
  }

  async vend(path: string, access: Access, now: number): Promise<ScopedCredentials> {
    const { name, key } = this.account!;
    const expiresAtMillis = now + this.ttlMs;
    const directory = this.scope === "table" ? path : undefined;
    const sas = serviceSas({
      account: name,
      key,
      container: this.root.bucket,
      directory,
      access,
      startMillis: now - CLOCK_SKEW_MS,
      expiryMillis: expiresAtMillis,
      httpsOnly: this.storageOptions.allow_http !== "true",
    });
    const storageOptions: Record<string, string> = {
      azure_storage_account_name: name,
      azure_storage_sas_token: sas,
      expires_at_millis: String(expiresAtMillis),
    };
    Object.assign(storageOptions, passedOn(this.storageOptions, PASSED_ON));
    return { storageOptions, expiresAtMillis, scope: `az://${this.root.bucket}/${directory ?? ""}` };
  }
}
