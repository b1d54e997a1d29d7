import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../config-error";
import { childUri, parseRoot, parseStorageOptions, relativeTo } from "./root";

describe("the data root setting", () => {
  it("takes local paths, made absolute", () => {
    expect(parseRoot("./data")).toEqual({ kind: "local", uri: path.resolve("data") });
    expect(parseRoot("/srv/quiver/")).toEqual({ kind: "local", uri: "/srv/quiver" });
    expect(parseRoot("file:///srv/quiver")).toEqual({ kind: "local", uri: "/srv/quiver" });
  });

  it("takes object store URIs of each cloud, with or without a prefix", () => {
    expect(parseRoot("s3://my-bucket/lance/prod/")).toEqual({
      kind: "object",
      cloud: "s3",
      bucket: "my-bucket",
      prefix: "lance/prod",
      uri: "s3://my-bucket/lance/prod",
    });
    expect(parseRoot("gs://data_lake")).toEqual({ kind: "object", cloud: "gs", bucket: "data_lake", prefix: "", uri: "gs://data_lake" });
    expect(parseRoot("AZ://tables/q")).toMatchObject({ cloud: "az", bucket: "tables", prefix: "q", uri: "az://tables/q" });
  });

  it.each([
    ["", /QUIVER_ROOT is empty/],
    ["http://host/bucket", /scheme 'http:\/\/' is not supported/],
    ["s3://Bad_Bucket/x", /'Bad_Bucket' is not a valid bucket name/],
    ["az://my--container", /not a valid container name/],
    ["s3://ab", /not a valid bucket name/],
    ["s3://bucket/a/../b", /prefix segment '\.\.' is not allowed/],
    ["gs://bucket/a//b", /prefix segment '' is not allowed/],
    ["az://cont/a b", /prefix segment 'a b'/],
    ["s3://bucket/x?region=us-east-1", /takes no query/],
  ])("refuses %j with one line naming the problem", (raw, message) => {
    let error: unknown;
    try {
      parseRoot(raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("\n");
  });

  it("joins paths below the root, and finds a location's place below it", () => {
    const local = parseRoot("/srv/q");
    const remote = parseRoot("az://cont/pre");
    expect(childUri(local, "t.lance")).toBe("/srv/q/t.lance");
    expect(childUri(remote, "t.lance/_versions")).toBe("az://cont/pre/t.lance/_versions");
    expect(relativeTo(local, "/srv/q/t.lance")).toBe("t.lance");
    expect(relativeTo(local, "/srv/other/t.lance")).toBeNull();
    expect(relativeTo(remote, "az://cont/pre/t.lance/")).toBe("t.lance");
    expect(relativeTo(remote, "az://cont/prefix/t.lance")).toBeNull();
    expect(relativeTo(remote, "s3://cont/pre/t.lance")).toBeNull();
    expect(relativeTo(remote, "t.lance")).toBe("t.lance");
  });
});

describe("the storage options setting", () => {
  it("is a JSON object of string values; booleans and numbers become strings", () => {
    expect(parseStorageOptions(undefined)).toEqual({});
    expect(parseStorageOptions(" ")).toEqual({});
    expect(parseStorageOptions('{"aws_region":"eu-west-1","allow_http":true,"timeout":30}')).toEqual({
      aws_region: "eu-west-1",
      allow_http: "true",
      timeout: "30",
    });
  });

  it.each([
    ["{", /not valid JSON/],
    ["[]", /must be a JSON object/],
    ['"x"', /must be a JSON object/],
    ['{"Aws-Region":"x"}', /'Aws-Region' is not an option name/],
    ['{"aws_region":{"a":1}}', /value of 'aws_region' must be a string/],
  ])("refuses %j clearly", (raw, message) => {
    expect(() => parseStorageOptions(raw)).toThrow(message);
  });
});
