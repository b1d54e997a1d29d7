/**
 * Opens Lance datasets at any location below a data root, local or on an object store. The engine opens a dataset
 * either by a table name in a connection's directory (to which it adds `.lance`), or through a Lance namespace that
 * says where the table is. Quiver's locations follow Lance's directory namespace (`<name>.lance` at the root,
 * `<hash>_<ns$name>` below it), and object stores have no symbolic links to give them other names. So each process
 * runs a small Lance REST namespace on loopback that answers one question, "where is table X", and the engine's own
 * REST namespace client asks it: X is a root and a location below it, the answer its URI and storage options.
 *
 * The engine's commit connection presents a token of its own, and to it every table's versions are managed: the
 * engine stages each commit's manifest and asks here to publish it (engine-versions.ts), so that Quiver makes every
 * version its engine commits, with what the commit carries.
 *
 * The answers carry the store's credentials, so the namespace takes only requests with one of this process's random
 * tokens, and it listens on 127.0.0.1 only.
 */
import "server-only";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as lancedb from "@lancedb/lancedb";
import type { NativeConnection } from "./native";
import { EngineVersions, type LocatorAnswer } from "./engine-versions";
import type { ObjectStore } from "@/server/storage/object-store";
import { childUri, type DataRoot } from "@/server/storage/root";
import { DELIMITER } from "@/lib/identifiers";
import { ErrorCode, type ErrorCodeValue } from "@/lib/contract/errors";
import { config } from "@/server/config";

const LOCATION_SEGMENT = /^[A-Za-z0-9_.$-]+$/;

/**
 * A table location below a root: plain names separated by `/` (the catalog makes one-part locations; a registered
 * dataset may lie deeper), never `.` or `..`, so nothing that could reach outside the root.
 */
export function isPlainLocation(location: string): boolean {
  return location.split("/").every((segment) => LOCATION_SEGMENT.test(segment) && segment !== "." && segment !== "..");
}

interface RegisteredRoot {
  root: DataRoot;
  store: ObjectStore;
  storageOptions: Record<string, string>;
}

const TABLE_PATH = /^\/v1\/table\/([^/]+)\/(describe|declare|exists|version\/list|version\/describe|version\/create)$/;

class DatasetLocator {
  private readonly token = randomBytes(32);
  /** Presented by the commit connection, to which every table's versions are managed. */
  private readonly commitToken = randomBytes(32);
  private readonly roots = new Map<string, RegisteredRoot>();
  /**
   * One engine session for every connection: it holds the object-store clients, so that opening another table on
   * the same store reuses them (a new client per open costs about 20 ms on Azure, against 4 ms).
   */
  private readonly session = new lancedb.Session(config.engineIndexCacheBytes, config.engineMetadataCacheBytes);
  private listening?: Promise<string>;

  /** The namespace id under which tables of this root are asked for. */
  register(root: DataRoot, store: ObjectStore, storageOptions: Record<string, string>): string {
    for (const [id, known] of this.roots) if (known.root.uri === root.uri) return id;
    const id = `r${this.roots.size}`;
    this.roots.set(id, { root, store, storageOptions });
    return id;
  }

  /**
   * A connection of the engine that opens and creates tables `openTable(location, [rootId])`; with `commits`, the
   * one whose commits Quiver publishes (engine-versions.ts).
   */
  async connect(options: { readConsistencyInterval?: number; commits?: boolean }): Promise<NativeConnection> {
    const uri = await this.listen();
    const { commits = false, ...engineOptions } = options;
    const token = commits ? this.commitToken : this.token;
    const connection = await lancedb.connectNamespace(
      "rest",
      { uri, headers: { authorization: `Bearer ${token.toString("base64url")}` } },
      { ...engineOptions, session: this.session },
    );
    return (connection as unknown as { inner: NativeConnection }).inner;
  }

  private listen(): Promise<string> {
    this.listening ??= new Promise((resolve, reject) => {
      const server: Server = createServer((req, res) => {
        const send = ({ status, body }: LocatorAnswer) => {
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
        };
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          this.answer(req.method, req.url, req.headers.authorization, Buffer.concat(chunks)).then(send, (err: unknown) =>
            send({
              status: 503,
              body: { error: `the dataset locator could not answer: ${err instanceof Error ? err.message : String(err)}`, code: ErrorCode.ServiceUnavailable },
            }),
          );
        });
      });
      server.on("error", reject);
      // The engine's requests must never keep the process alive on their own.
      server.unref();
      // Exclusive: in a cluster worker a shared port-0 socket would be one port for all workers, each with its own token.
      server.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    });
    return this.listening;
  }

  private async answer(method: string | undefined, path: string | undefined, authorization: string | undefined, body: Buffer): Promise<LocatorAnswer> {
    const refused = (status: number, code: ErrorCodeValue, error: string): LocatorAnswer => ({ status, body: { error, code } });
    const commits = this.presents(authorization, this.commitToken);
    if (!commits && !this.presents(authorization, this.token)) return refused(401, ErrorCode.Unauthenticated, "not this process's request");
    const url = new URL(path ?? "/", "http://locator");
    const match = TABLE_PATH.exec(url.pathname);
    // Version operations are the commit connection's alone: to the others, versions are the store's own.
    if (!match || method !== "POST" || (match[2].startsWith("version/") && !commits)) {
      return refused(406, ErrorCode.Unsupported, `the dataset locator answers only describe and declare, not ${method} ${url.pathname}`);
    }
    const [rootId, ...rest] = decodeURIComponent(match[1]).split(url.searchParams.get("delimiter") ?? DELIMITER);
    const location = rest.join(DELIMITER);
    const registered = this.roots.get(rootId);
    if (!registered || !isPlainLocation(location)) {
      return refused(404, ErrorCode.TableNotFound, `no dataset location '${location}' in root '${rootId}'`);
    }
    if (match[2] === "exists") return { status: 200, body: {} };
    if (match[2].startsWith("version/")) {
      const request = body.length ? (JSON.parse(body.toString("utf8")) as Record<string, unknown> | null) : null;
      const operation = match[2].slice("version/".length) as "list" | "describe" | "create";
      return new EngineVersions(registered.root, registered.store, location).answer(operation, { ...(request ?? {}), ...queryOptions(url) });
    }
    return {
      status: 200,
      body: { location: childUri(registered.root, location), storage_options: registered.storageOptions, ...(commits ? { managed_versioning: true } : {}) },
    };
  }

  private presents(header: string | undefined, token: Buffer): boolean {
    const presented = Buffer.from(/^Bearer (\S+)$/.exec(header ?? "")?.[1] ?? "", "base64url");
    return presented.length === token.length && timingSafeEqual(presented, token);
  }
}

/** What the engine sends of a version operation as query parameters: ListTableVersions's paging, and the branch. */
function queryOptions(url: URL): { limit?: number; descending?: boolean; branch?: string } {
  const limit = Number(url.searchParams.get("limit") ?? NaN);
  const descending = url.searchParams.get("descending");
  const branch = url.searchParams.get("branch");
  return {
    ...(Number.isInteger(limit) && limit > 0 ? { limit } : {}),
    ...(descending === null ? {} : { descending: descending !== "false" }),
    ...(branch === null ? {} : { branch }),
  };
}

/** One locator per process, shared by every database's storage. */
export const datasetLocator = new DatasetLocator();
