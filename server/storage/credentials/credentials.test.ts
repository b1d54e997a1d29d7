/**
 * Vending without a cloud: what each store's credentials allow (policies, boundaries, SAS fields), which settings
 * are refused, and the S3 vendor's AssumeRole call as it goes over the wire, to a stand-in for STS on loopback
 * (no STS can be installed here; Azure's SAS is used for real against Azurite by the REST namespace client tests).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../config-error";
import { parseRoot, type ObjectRoot } from "../root";
import { AwsRoleVendor, sessionName, sessionPolicy } from "./aws";
import { serviceSas } from "./azure";
import { accessBoundary } from "./gcs";
import { CredentialVendor, type VendingSettings } from "./index";

const settings = (mode: VendingSettings["mode"], aws: VendingSettings["aws"] = { roleArn: undefined, externalId: undefined }): VendingSettings => ({
  mode,
  ttlMs: 600_000,
  aws,
});
const ROLE = "arn:aws:iam::123456789012:role/lance-writer";

describe("which settings vend", () => {
  it("vends nothing when off, on any root", async () => {
    const vendor = new CredentialVendor(parseRoot("s3://bucket/root"), {}, settings("off"));
    expect(vendor.available).toBe(false);
    expect(await vendor.vend("s3://bucket/root/t.lance", "write", "someone")).toBeNull();
  });

  it.each([
    ["/srv/quiver", settings("table"), /needs an object-store QUIVER_ROOT/],
    ["s3://bucket/root", settings("container"), /container is for az:\/\/ roots/],
    ["gs://bucket/root", settings("container"), /container is for az:\/\/ roots/],
    ["s3://bucket/root", settings("table"), /needs QUIVER_VEND_AWS_ROLE_ARN/],
    ["s3://bucket/root", settings("table", { roleArn: "lance-writer", externalId: undefined }), /must be an IAM role ARN/],
  ])("refuses %s with %j", (root, vending, message) => {
    const make = () => new CredentialVendor(parseRoot(root), {}, vending);
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(message);
  });

  it("refuses a location outside the root", async () => {
    const vendor = new CredentialVendor(
      parseRoot("az://box/root"),
      { azure_storage_account_name: "acct", azure_storage_account_key: "a2V5" },
      settings("container"),
    );
    await expect(vendor.vend("az://box/elsewhere/t.lance", "read", "someone")).rejects.toThrow(/not a table below az:\/\/box\/root/);
  });
});

describe("Azure SAS", () => {
  const base = { account: "acct", key: Buffer.from("secret").toString("base64"), container: "box", startMillis: 0, expiryMillis: 3_600_000, httpsOnly: true };

  it("names the container, or one directory and its depth", () => {
    const container = new URLSearchParams(serviceSas({ ...base, access: "read" }));
    expect(Object.fromEntries([...container].filter(([k]) => k !== "sig"))).toEqual({
      sp: "rl",
      st: "1970-01-01T00:00:00Z",
      se: "1970-01-01T01:00:00Z",
      spr: "https",
      sv: "2021-08-06",
      sr: "c",
    });
    const directory = new URLSearchParams(serviceSas({ ...base, directory: "root/ns$t.lance", access: "write" }));
    expect(directory.get("sr")).toBe("d");
    expect(directory.get("sdd")).toBe("2");
    expect(directory.get("sp")).toBe("racwdl");
    // The signature covers the resource: the same fields for another directory sign differently.
    expect(new URLSearchParams(serviceSas({ ...base, directory: "root/other.lance", access: "write" })).get("sig")).not.toBe(directory.get("sig"));
  });

  it("scopes container vending to the container, with the connection settings a client needs and no account key", async () => {
    const options = {
      azure_storage_account_name: "acct",
      azure_storage_account_key: base.key,
      azure_storage_endpoint: "http://127.0.0.1:1/acct",
      allow_http: "true",
    };
    const vendor = new CredentialVendor(parseRoot("az://box/root"), options, settings("container"));
    const vended = (await vendor.vend("az://box/root/t.lance", "read", "someone", 1_000_000))!;
    expect(vended.scope).toBe("az://box/");
    expect(vended.expiresAtMillis).toBe(1_600_000);
    expect(Object.keys(vended.storageOptions).sort()).toEqual([
      "allow_http",
      "azure_storage_account_name",
      "azure_storage_endpoint",
      "azure_storage_sas_token",
      "expires_at_millis",
    ]);
    expect(new URLSearchParams(vended.storageOptions.azure_storage_sas_token).get("spr")).toBeNull();
  });
});

describe("S3 role sessions", () => {
  it("allow listing and reading below the table's prefix, and writing and deleting only for writers", () => {
    const read = JSON.parse(sessionPolicy("bucket", "root/ns$t.lance", "read"));
    expect(read.Statement).toEqual([
      {
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: "arn:aws:s3:::bucket",
        Condition: { StringLike: { "s3:prefix": ["root/ns$t.lance/*", "root/ns$t.lance"] } },
      },
      { Effect: "Allow", Action: ["s3:GetObject", "s3:GetObjectVersion"], Resource: "arn:aws:s3:::bucket/root/ns$t.lance/*" },
    ]);
    const write = JSON.parse(sessionPolicy("bucket", "root/ns$t.lance", "write"));
    expect(write.Statement[2]).toEqual({
      Effect: "Allow",
      Action: ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
      Resource: "arn:aws:s3:::bucket/root/ns$t.lance/*",
    });
  });

  it("are named after who they were vended to, in what STS allows", () => {
    expect(sessionName("ana@example.com")).toBe("quiver-ana@example.com");
    expect(sessionName("key: build bot/2")).toBe("quiver-key__build_bot_2");
    expect(sessionName("x".repeat(100))).toHaveLength(64);
  });

  describe("over the wire", () => {
    let sts: http.Server;
    const calls: Array<{ form: URLSearchParams; authorization: string }> = [];
    const saved = process.env.AWS_ENDPOINT_URL_STS;

    beforeAll(async () => {
      sts = http.createServer((req, res) => {
        let body = "";
        req.on("data", (d) => (body += d));
        req.on("end", () => {
          calls.push({ form: new URLSearchParams(body), authorization: req.headers.authorization ?? "" });
          res.setHeader("content-type", "text/xml");
          res.end(
            `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
              `<AccessKeyId>ASIASESSION</AccessKeyId><SecretAccessKey>session-secret</SecretAccessKey><SessionToken>session-token</SessionToken>` +
              `<Expiration>2030-01-01T00:15:00Z</Expiration></Credentials><AssumedRoleUser><Arn>${ROLE}/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>` +
              `</AssumeRoleResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></AssumeRoleResponse>`,
          );
        });
      });
      await new Promise<void>((resolve) => sts.listen(0, "127.0.0.1", resolve));
      process.env.AWS_ENDPOINT_URL_STS = `http://127.0.0.1:${(sts.address() as AddressInfo).port}`;
    });
    afterAll(() => {
      process.env.AWS_ENDPOINT_URL_STS = saved;
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_STS;
      sts.close();
    });

    it("assume the role with the service's own key, a prefix policy and a session of at least 15 minutes, and hand out only the session", async () => {
      const options = {
        aws_access_key_id: "AKIASERVICE",
        aws_secret_access_key: "service-secret",
        aws_region: "eu-west-1",
        aws_endpoint: "http://minio:9000",
        allow_http: "true",
      };
      const root = parseRoot("s3://bucket/root") as ObjectRoot;
      const vendor = new AwsRoleVendor(root, options, { roleArn: ROLE, externalId: "ext-1" }, 600_000);
      const vended = await vendor.vend("root/ns$t.lance", "write", 0, "ana@example.com");

      expect(calls).toHaveLength(1);
      const { form, authorization } = calls[0];
      expect(form.get("Action")).toBe("AssumeRole");
      expect(form.get("RoleArn")).toBe(ROLE);
      expect(form.get("ExternalId")).toBe("ext-1");
      expect(form.get("RoleSessionName")).toBe("quiver-ana@example.com");
      expect(form.get("DurationSeconds")).toBe("900");
      expect(JSON.parse(form.get("Policy")!)).toEqual(JSON.parse(sessionPolicy("bucket", "root/ns$t.lance", "write")));
      expect(authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASERVICE\/\d{8}\/eu-west-1\/sts\/aws4_request/);

      expect(vended).toEqual({
        storageOptions: {
          aws_access_key_id: "ASIASESSION",
          aws_secret_access_key: "session-secret",
          aws_session_token: "session-token",
          expires_at_millis: String(Date.parse("2030-01-01T00:15:00Z")),
          aws_region: "eu-west-1",
          aws_endpoint: "http://minio:9000",
          allow_http: "true",
        },
        expiresAtMillis: Date.parse("2030-01-01T00:15:00Z"),
        scope: "s3://bucket/root/ns$t.lance/",
      });
      expect(JSON.stringify(vended)).not.toContain("service-secret");
    });
  });
});

describe("GCS downscoped tokens", () => {
  it("are bounded to the bucket, and by a condition to the table's objects and listings of its prefix", () => {
    const rule = accessBoundary("lake", "root/ns$t.lance", "read").accessBoundary.accessBoundaryRules[0];
    expect(rule.availableResource).toBe("//storage.googleapis.com/projects/_/buckets/lake");
    expect(rule.availablePermissions).toEqual(["inRole:roles/storage.objectViewer"]);
    expect(rule.availabilityCondition!.expression).toBe(
      "resource.name.startsWith('projects/_/buckets/lake/objects/root/ns$t.lance/') || api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('root/ns$t.lance/')",
    );
    expect(accessBoundary("lake", "t.lance", "write").accessBoundary.accessBoundaryRules[0].availablePermissions).toEqual(["inRole:roles/storage.objectAdmin"]);
  });
});
