import { describe, expect, it } from "vitest";
import { readCacheSettings } from "./read-cache.ts";

const s3Keys = { aws_access_key_id: "AKID", aws_secret_access_key: "secret" };
const env = (root: string, options: Record<string, string> = {}, more: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  QUIVER_ROOT: root,
  QUIVER_STORAGE_OPTIONS: JSON.stringify(options),
  QUIVER_READ_CACHE_DIR: "/tmp/quiver-settings-test",
  NODE_ENV: "test",
  ...more,
});

describe("the read cache's settings", () => {
  it("serves an s3:// root with a key of its own, signing for the region's endpoint or the one the options name", () => {
    const regional = readCacheSettings(env("s3://lake/prod", { ...s3Keys, aws_region: "eu-west-1" }));
    expect("settings" in regional && regional.settings.upstream).toMatchObject({
      kind: "s3",
      endpoint: new URL("https://s3.eu-west-1.amazonaws.com"),
      virtualHosted: false,
      credentials: { accessKeyId: "AKID", secretAccessKey: "secret", region: "eu-west-1" },
    });
    const named = readCacheSettings(env("s3://lake/prod", { ...s3Keys, aws_endpoint: "http://minio:9000", aws_virtual_hosted_style_request: "true" }));
    expect("settings" in named && named.settings.upstream).toMatchObject({ kind: "s3", endpoint: new URL("http://minio:9000"), virtualHosted: true });
  });

  it("serves a gs:// root with Google's XML API, or the emulator a key names, with a secret of its own each start", async () => {
    const adc = readCacheSettings(env("gs://lake/prod"));
    expect("settings" in adc && adc.settings.upstream).toMatchObject({ kind: "gcs", endpoint: new URL("https://storage.googleapis.com") });
    const again = readCacheSettings(env("gs://lake/prod"));
    const secret = (made: typeof adc) => ("settings" in made && made.settings.upstream.kind === "gcs" ? made.settings.upstream.secret : "");
    expect(secret(adc)).toMatch(/^[\w-]{32}$/);
    expect(secret(again)).not.toBe(secret(adc));
    const key = JSON.stringify({ gcs_base_url: "http://127.0.0.1:4443", disable_oauth: true, client_email: "e", private_key: "" });
    const emulator = readCacheSettings(env("gs://lake/prod", { google_service_account_key: key }));
    expect("settings" in emulator && emulator.settings.upstream).toMatchObject({ kind: "gcs", endpoint: new URL("http://127.0.0.1:4443") });
    const upstream = "settings" in emulator && emulator.settings.upstream.kind === "gcs" ? emulator.settings.upstream : undefined;
    expect(await upstream?.accessToken()).toBe("");
  });

  it("says why it is off where it cannot check requests, and refuses to be turned on where it cannot serve", () => {
    expect(readCacheSettings(env("s3://lake/prod"))).toMatchObject({ off: expect.stringMatching(/access key id and secret/), worthSaying: true });
    expect(readCacheSettings(env("gs://lake/prod", {}, { GOOGLE_SERVICE_ACCOUNT: "/etc/key.json" }))).toMatchObject({
      off: expect.stringMatching(/GOOGLE_SERVICE_ACCOUNT is set: name the key's path as google_service_account/),
      worthSaying: true,
    });
    expect(readCacheSettings(env("gs://lake/prod", { google_service_account: "/nonexistent/key.json" }))).toMatchObject({
      off: expect.stringMatching(/service account key cannot be read/),
    });
    expect(readCacheSettings(env("/srv/lake"))).toMatchObject({ worthSaying: false });
    expect(() => readCacheSettings(env("hf://lake/prod", {}, { QUIVER_READ_CACHE: "on" }))).toThrow(/serves az:\/\/, s3:\/\/ and gs:\/\/ roots/);
    expect(readCacheSettings(env("s3://lake/prod", s3Keys, { QUIVER_READ_CACHE: "off" }))).toMatchObject({ off: "QUIVER_READ_CACHE is off" });
  });
});
