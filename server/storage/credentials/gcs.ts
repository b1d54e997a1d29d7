/**
 * GCS: the service's own access token, downscoped by Google's STS with a credential access boundary that allows
 * only the table's prefix (objects below it, and listings of it). Google sets the token's lifetime: that of the
 * service's token, at most an hour, whatever QUIVER_VENDED_CREDENTIALS_TTL says; `expires_at_millis` tells clients.
 */
import "server-only";
import type { CredentialAccessBoundary, GoogleAuth } from "google-auth-library";
import { ConfigError } from "../../config-error";
import { openDalConfig } from "../cloud-store";
import type { ObjectRoot } from "../root";
import type { Access, ScopedCredentials, Vendor } from "./vendor";

const ROLES: Record<Access, string> = { read: "inRole:roles/storage.objectViewer", write: "inRole:roles/storage.objectAdmin" };
/** When Google does not say how long a token lives, clients are told to refresh it this soon. */
const UNKNOWN_LIFETIME_MS = 5 * 60_000;

/** The boundary: the bucket, narrowed by a condition to objects below the prefix and listings that stay below it. */
export function accessBoundary(bucket: string, path: string, access: Access): CredentialAccessBoundary {
  // Bucket names and key segments are validated before they get here: neither can hold a quote.
  const objects = `resource.name.startsWith('projects/_/buckets/${bucket}/objects/${path}/')`;
  const listings = `api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('${path}/')`;
  return {
    accessBoundary: {
      accessBoundaryRules: [
        {
          availableResource: `//storage.googleapis.com/projects/_/buckets/${bucket}`,
          availablePermissions: [ROLES[access]],
          availabilityCondition: { title: "one table", expression: `${objects} || ${listings}` },
        },
      ],
    },
  };
}

export class GcsDownscopedVendor implements Vendor {
  /** The library is loaded only by servers that vend on GCS. */
  private readonly library = import("google-auth-library");
  private readonly auth: Promise<GoogleAuth>;

  constructor(
    private readonly root: ObjectRoot,
    storageOptions: Record<string, string>,
  ) {
    const { credential, credential_path: keyFile } = openDalConfig(root, storageOptions).config;
    this.auth = this.library.then(
      ({ GoogleAuth }) =>
        new GoogleAuth({
          scopes: ["https://www.googleapis.com/auth/devstorage.full_control"],
          ...(credential ? { credentials: JSON.parse(Buffer.from(credential, "base64").toString("utf8")) } : keyFile ? { keyFile } : {}),
        }),
    );
  }

  async check(): Promise<void> {
    try {
      await (await this.auth).getClient();
    } catch (err) {
      throw new ConfigError(
        `QUIVER_VEND_CREDENTIALS=table on gs:// downscopes the service's own Google credentials, and none were found (google_service_account, GOOGLE_APPLICATION_CREDENTIALS or the metadata server): ${(err as Error).message.split("\n")[0]}`,
      );
    }
  }

  async vend(path: string, access: Access, now: number): Promise<ScopedCredentials> {
    const { DownscopedClient } = await this.library;
    const authClient = await (await this.auth).getClient();
    const downscoped = new DownscopedClient({ authClient, credentialAccessBoundary: accessBoundary(this.root.bucket, path, access) });
    const { token, expirationTime } = await downscoped.getAccessToken();
    if (!token) throw new Error("Google's STS answered the downscoping without a token");
    const expiresAtMillis = expirationTime ?? now + UNKNOWN_LIFETIME_MS;
    return {
      storageOptions: { google_storage_token: token, expires_at_millis: String(expiresAtMillis) },
      expiresAtMillis,
      scope: `gs://${this.root.bucket}/${path}/`,
    };
  }
}
