/**
 * S3: an STS AssumeRole session of the role the operator names (`QUIVER_VEND_AWS_ROLE_ARN`), with a session policy
 * that allows only the table's prefix, so the session can do no more than both the role and the policy allow. The
 * role is assumed with the service's own AWS credentials (the root's options, or the SDK's usual chain: environment,
 * profile, instance or pod role).
 */
import "server-only";
import type { STSClient, STSClientConfig } from "@aws-sdk/client-sts";
import { ConfigError } from "../../config-error";
import { openDalConfig } from "../cloud-store";
import type { ObjectRoot } from "../root";
import { passedOn, type Access, type ScopedCredentials, type Vendor } from "./vendor";

/** STS grants sessions of 15 minutes to 12 hours. */
const MIN_SESSION_S = 900;
const MAX_SESSION_S = 43_200;
/** Connection settings a client needs to reach the same buckets, as the root's options give them; none is a secret. */
const PASSED_ON = ["allow_http", "aws_virtual_hosted_style_request", "aws_s3_express"];

/** The session policy: list, read and (for writers) write and delete, below one prefix of one bucket. */
export function sessionPolicy(bucket: string, path: string, access: Access): string {
  const objects = `arn:aws:s3:::${bucket}/${path}/*`;
  const statements: object[] = [
    { Effect: "Allow", Action: "s3:ListBucket", Resource: `arn:aws:s3:::${bucket}`, Condition: { StringLike: { "s3:prefix": [`${path}/*`, path] } } },
    { Effect: "Allow", Action: ["s3:GetObject", "s3:GetObjectVersion"], Resource: objects },
  ];
  if (access === "write") statements.push({ Effect: "Allow", Action: ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"], Resource: objects });
  return JSON.stringify({ Version: "2012-10-17", Statement: statements });
}

/** A role session name says who the credentials were vended to, in what STS allows (2-64 of `\w+=,.@-`). */
export function sessionName(who: string): string {
  return `quiver-${who.replace(/[^\w+=,.@-]/g, "_")}`.slice(0, 64);
}

export interface AwsRoleSettings {
  roleArn: string | undefined;
  externalId: string | undefined;
}

export class AwsRoleVendor implements Vendor {
  /** Made at the first vend: the SDK is loaded only by servers that vend on S3. */
  private client: Promise<{ sts: STSClient; AssumeRoleCommand: typeof import("@aws-sdk/client-sts").AssumeRoleCommand }> | undefined;
  private readonly clientConfig: STSClientConfig;
  private readonly roleArn: string;
  /** The region and endpoint the service reaches the bucket with (from its options or the environment). */
  private readonly connection: Record<string, string> = {};

  constructor(
    private readonly root: ObjectRoot,
    private readonly storageOptions: Record<string, string>,
    private readonly role: AwsRoleSettings,
    private readonly ttlMs: number,
  ) {
    if (!role.roleArn) {
      throw new ConfigError(
        "QUIVER_VEND_CREDENTIALS=table on s3:// needs QUIVER_VEND_AWS_ROLE_ARN: the IAM role whose sessions, limited to one table's prefix, are vended",
      );
    }
    if (!/^arn:aws[\w-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/.test(role.roleArn)) {
      throw new ConfigError(`QUIVER_VEND_AWS_ROLE_ARN must be an IAM role ARN such as arn:aws:iam::123456789012:role/lance-writer, got '${role.roleArn}'`);
    }
    this.roleArn = role.roleArn;
    const {
      region,
      endpoint,
      access_key_id: accessKeyId,
      secret_access_key: secretAccessKey,
      session_token: sessionToken,
    } = openDalConfig(root, storageOptions).config;
    if (region) this.connection.aws_region = region;
    if (endpoint) this.connection.aws_endpoint = endpoint;
    this.clientConfig = {
      region: region ?? "us-east-1",
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey, sessionToken } } : {}),
    };
  }

  async vend(path: string, access: Access, now: number, who: string): Promise<ScopedCredentials> {
    const seconds = Math.min(MAX_SESSION_S, Math.max(MIN_SESSION_S, Math.round(this.ttlMs / 1000)));
    this.client ??= import("@aws-sdk/client-sts").then(({ STSClient, AssumeRoleCommand }) => ({ sts: new STSClient(this.clientConfig), AssumeRoleCommand }));
    const { sts, AssumeRoleCommand } = await this.client;
    const { Credentials: session } = await sts.send(
      new AssumeRoleCommand({
        RoleArn: this.roleArn,
        RoleSessionName: sessionName(who),
        ExternalId: this.role.externalId,
        Policy: sessionPolicy(this.root.bucket, path, access),
        DurationSeconds: seconds,
      }),
    );
    if (!session?.AccessKeyId || !session.SecretAccessKey || !session.SessionToken) throw new Error("STS answered AssumeRole without credentials");
    const expiresAtMillis = session.Expiration?.getTime() ?? now + seconds * 1000;
    const storageOptions: Record<string, string> = {
      aws_access_key_id: session.AccessKeyId,
      aws_secret_access_key: session.SecretAccessKey,
      aws_session_token: session.SessionToken,
      expires_at_millis: String(expiresAtMillis),
      ...this.connection,
    };
    Object.assign(storageOptions, passedOn(this.storageOptions, PASSED_ON));
    return { storageOptions, expiresAtMillis, scope: `s3://${this.root.bucket}/${path}/` };
  }
}
