/**
 * Credentials vended to clients that write a table's data themselves (the Lance REST namespace client writes the
 * dataset at the location a declare returns). Never the service's own secret: short-lived, read-only for readers,
 * and scoped as narrowly as the store allows. `QUIVER_VEND_CREDENTIALS`:
 * - `table`: credentials that reach one table's prefix: an S3 role session with a prefix policy, a downscoped GCS
 *   token, or an Azure directory SAS (accounts with a hierarchical namespace only);
 * - `container`: an Azure SAS on the whole container, all a flat-namespace account can scope;
 * - `off` (the default): none; clients bring their own credentials for the store.
 */
import "server-only";
import { config } from "../../config";
import { ConfigError } from "../../config-error";
import { relativeTo, type DataRoot } from "../root";
import { AwsRoleVendor, type AwsRoleSettings } from "./aws";
import { AzureSasVendor } from "./azure";
import { GcsDownscopedVendor } from "./gcs";
import type { Access, ScopedCredentials, Vendor } from "./vendor";

export type { Access } from "./vendor";
export type VendingMode = "off" | "table" | "container";

export interface VendingSettings {
  mode: VendingMode;
  ttlMs: number;
  aws: AwsRoleSettings;
}

function vendorFor(root: DataRoot, storageOptions: Record<string, string>, settings: VendingSettings): Vendor | null {
  if (settings.mode === "off") return null;
  if (root.kind === "local") {
    throw new ConfigError(`QUIVER_VEND_CREDENTIALS=${settings.mode} needs an object-store QUIVER_ROOT: clients of a local root read its files directly`);
  }
  if (settings.mode === "container" && root.cloud !== "az") {
    throw new ConfigError(`QUIVER_VEND_CREDENTIALS=container is for az:// roots (a SAS on the container); on ${root.cloud}:// use 'table'`);
  }
  switch (root.cloud) {
    case "az":
      return new AzureSasVendor(root, storageOptions, settings.mode, settings.ttlMs);
    case "s3":
      return new AwsRoleVendor(root, storageOptions, settings.aws, settings.ttlMs);
    case "gs":
      return new GcsDownscopedVendor(root, storageOptions);
  }
}

export class CredentialVendor {
  private readonly vendor: Vendor | null;

  constructor(
    private readonly root: DataRoot,
    storageOptions: Record<string, string>,
    settings: VendingSettings,
  ) {
    this.vendor = vendorFor(root, storageOptions, settings);
  }

  /** Whether credentials are vended at all. */
  get available(): boolean {
    return this.vendor !== null;
  }

  /** Checks at start that the store can vend as configured (a ConfigError says what is missing). */
  async check(): Promise<void> {
    await this.vendor?.check?.();
  }

  /** Credentials for the table at `location` (a URI below the root), or null when vending is off. */
  async vend(location: string, access: Access, who: string, now = Date.now()): Promise<ScopedCredentials | null> {
    if (!this.vendor || this.root.kind !== "object") return null;
    const key = relativeTo(this.root, location);
    if (key === null || key === "") throw new Error(`cannot vend credentials for ${location}, which is not a table below ${this.root.uri}`);
    return this.vendor.vend([this.root.prefix, key].filter(Boolean).join("/"), access, now, who);
  }
}

let vendor: CredentialVendor | undefined;

/** The process's vendor, for the data root and every database inside it (scopes come from table locations). */
export function credentialVendor(): CredentialVendor {
  vendor ??= new CredentialVendor(config.root, config.storageOptions, config.vending);
  return vendor;
}
