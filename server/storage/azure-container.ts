/**
 * Creates an Azure Blob container, as a local data root's directory is made on start: with the account key, one
 * SharedKey-signed request, answered 201 (made) or 409 (already there). OpenDAL does not create containers.
 */
import "server-only";
import { createHmac } from "node:crypto";

const API_VERSION = "2021-08-06";

/** The SharedKey authorization of a request with no body and no conditional headers. */
export function sharedKeyAuthorization(account: string, key: string, method: string, url: URL, headers: Record<string, string>): string {
  const canonicalHeaders = Object.keys(headers)
    .filter((h) => h.startsWith("x-ms-"))
    .sort()
    .map((h) => `${h}:${headers[h]}\n`)
    .join("");
  const query = [...url.searchParams.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `\n${k.toLowerCase()}:${v}`);
  const resource = `/${account}${url.pathname}${query.join("")}`;
  const stringToSign = [method, "", "", "", "", "", "", "", "", "", "", ""].join("\n") + "\n" + canonicalHeaders + resource;
  const signature = createHmac("sha256", Buffer.from(key, "base64")).update(stringToSign, "utf8").digest("base64");
  return `SharedKey ${account}:${signature}`;
}

/** `endpoint` is the account's blob endpoint, e.g. `https://acme.blob.core.windows.net`. */
export async function ensureAzureContainer(endpoint: string, account: string, key: string, container: string): Promise<void> {
  const url = new URL(`${endpoint.replace(/\/+$/, "")}/${container}?restype=container`);
  const headers: Record<string, string> = { "x-ms-date": new Date().toUTCString(), "x-ms-version": API_VERSION };
  const res = await fetch(url, {
    method: "PUT",
    headers: { ...headers, authorization: sharedKeyAuthorization(account, key, "PUT", url, headers) },
    signal: AbortSignal.timeout(15_000),
  });
  if (res.status !== 201 && res.status !== 409) {
    const message = /<Message>([^<\n]*)/.exec(await res.text())?.[1];
    throw Object.assign(new Error(`creating container '${container}' answered ${res.status}${message ? `: ${message}` : ""}`), {
      status: res.status,
      code: res.headers.get("x-ms-error-code") ?? undefined,
      storeMessage: message,
    });
  }
}
