/**
 * Lance's names for the storage options Quiver reads itself, with each cloud's environment variables as fallbacks
 * where Lance reads them too: one list for the object store (../cloud-store.ts) and the read cache, which also runs in
 * `npm start`'s primary process (erasable TypeScript, see disk-cache.ts).
 */

export const AZURE_ACCOUNT = { names: ["azure_storage_account_name", "account_name"], env: ["AZURE_STORAGE_ACCOUNT_NAME"] };
export const AZURE_KEY = {
  names: ["azure_storage_account_key", "azure_storage_access_key", "account_key", "access_key"],
  env: ["AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY"],
};
export const AZURE_SAS = { names: ["azure_storage_sas_token", "azure_storage_sas_key", "sas_token", "sas_key"], env: ["AZURE_STORAGE_SAS_TOKEN"] };
export const AZURE_ENDPOINT = { names: ["azure_storage_endpoint", "azure_endpoint", "endpoint"], env: ["AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"] };

export const AWS_REGION = { names: ["aws_region", "region", "aws_default_region"], env: ["AWS_REGION", "AWS_DEFAULT_REGION"] };
export const AWS_ENDPOINT = { names: ["aws_endpoint", "aws_endpoint_url", "endpoint", "endpoint_url"], env: ["AWS_ENDPOINT", "AWS_ENDPOINT_URL"] };
export const AWS_ACCESS_KEY_ID = { names: ["aws_access_key_id", "access_key_id"], env: ["AWS_ACCESS_KEY_ID"] };
export const AWS_SECRET_ACCESS_KEY = { names: ["aws_secret_access_key", "secret_access_key"], env: ["AWS_SECRET_ACCESS_KEY"] };
export const AWS_SESSION_TOKEN = { names: ["aws_session_token", "aws_token", "session_token", "token"], env: ["AWS_SESSION_TOKEN"] };
export const AWS_VIRTUAL_HOSTED = { names: ["aws_virtual_hosted_style_request", "virtual_hosted_style_request"], env: ["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] };

export const GCS_KEY = { names: ["google_service_account_key", "service_account_key"], env: ["GOOGLE_SERVICE_ACCOUNT_KEY"] };
export const GCS_KEY_PATH = {
  names: ["google_service_account", "google_service_account_path", "service_account", "service_account_path"],
  env: ["GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH", "GOOGLE_APPLICATION_CREDENTIALS"],
};
export const GCS_APPLICATION_CREDENTIALS = { names: ["google_application_credentials"], env: ["GOOGLE_APPLICATION_CREDENTIALS"] };
/** OpenDAL's endpoint option for Quiver's own store; the engine takes its endpoint from a key's `gcs_base_url`. */
export const GCS_ENDPOINT = { names: ["google_storage_endpoint", "endpoint"] };

/** The first option given among Lance's names for it, then the environment variables. */
export function pickOption(options: Record<string, string>, option: { names: string[]; env?: string[] }): string | undefined {
  for (const name of option.names) if (options[name]) return options[name];
  for (const name of option.env ?? []) if (process.env[name]) return process.env[name];
  return undefined;
}

/** The Azure account's blob endpoint the options name, or the account's public one. */
export function azureEndpoint(options: Record<string, string>): string | undefined {
  const account = pickOption(options, AZURE_ACCOUNT);
  return pickOption(options, AZURE_ENDPOINT) ?? (account ? `https://${account}.blob.core.windows.net` : undefined);
}
