/**
 * Opens Lance datasets at any location below a data root, local or on an object store. The engine opens a dataset
 * either by a table name in a connection's directory (to which it adds `.lance`), or through a Lance namespace that
 * says where the table is. Quiver's locations follow Lance's directory namespace (`<name>.lance` at the root,
 * `<hash>_<ns$name>` below it), and object stores have no symbolic links to give them other names. So each process
 * runs a small Lance REST namespace on loopback that answers one question, "where is table X", and the engine's own
 * REST namespace client asks it: X is a root and a location below it, the answer its URI and storage options.
 *
 * The answers carry the store's credentials, so the namespace takes only requests with this process's random
 * token, and it listens on 127.0.0.1 only.
 */
import "server-only";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as lancedb from "@lancedb/lancedb";
import type { NativeConnection } from "./native";
import { childUri, type DataRoot } from "@/server/storage/root";
import { DELIMITER } from "@/lib/identifiers";
import { ErrorCode } from "@/lib/contract/errors";
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
  storageOptions: Record<string, string>;
}

class DatasetLocator {
  private readonly token = randomBytes(32);
  private readonly roots = new Map<string, RegisteredRoot>();
  /**
   * One engine session for every connection: it holds the object-store clients, so that opening another table on
   * the same store reuses them (a new client per open costs about 20 ms on Azure, against 4 ms).
   */
  private readonly session = new lancedb.Session(config.engineIndexCacheBytes, config.engineMetadataCacheBytes);
  private listening?: Promise<string>;

  /** The namespace id under which tables of this root are asked for. */
  register(root: DataRoot, storageOptions: Record<string, string>): string {
    for (const [id, known] of this.roots) if (known.root.uri === root.uri) return id;
    const id = `r${this.roots.size}`;
    this.roots.set(id, { root, storageOptions });
    return id;
  }

  /** A connection of the engine that opens and creates tables `openTable(location, [rootId])`. */
  async connect(options: { readConsistencyInterval?: number }): Promise<NativeConnection> {
    const uri = await this.listen();
    const connection = await lancedb.connectNamespace(
      "rest",
      { uri, headers: { authorization: `Bearer ${this.token.toString("base64url")}` } },
      { ...options, session: this.session },
    );
    return (connection as unknown as { inner: NativeConnection }).inner;
  }

  private listen(): Promise<string> {
    this.listening ??= new Promise((resolve, reject) => {
      const server: Server = createServer((req, res) => {
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
        };
        req.resume();
        req.on("end", () => {
          if (!this.authorized(req.headers.authorization)) return send(401, { error: "not this process's request", code: ErrorCode.Unauthenticated });
          const url = new URL(req.url ?? "/", "http://locator");
          const match = /^\/v1\/table\/([^/]+)\/(describe|declare|exists)$/.exec(url.pathname);
          if (!match || req.method !== "POST")
            return send(406, {
              error: `the dataset locator answers only describe and declare, not ${req.method} ${url.pathname}`,
              code: ErrorCode.Unsupported,
            });
          const [rootId, ...rest] = decodeURIComponent(match[1]).split(url.searchParams.get("delimiter") ?? DELIMITER);
          const location = rest.join(DELIMITER);
          const registered = this.roots.get(rootId);
          if (!registered || !isPlainLocation(location)) {
            return send(404, { error: `no dataset location '${location}' in root '${rootId}'`, code: ErrorCode.TableNotFound });
          }
          if (match[2] === "exists") return send(200, {});
          send(200, { location: childUri(registered.root, location), storage_options: registered.storageOptions });
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

  private authorized(header: string | undefined): boolean {
    const presented = Buffer.from(/^Bearer (\S+)$/.exec(header ?? "")?.[1] ?? "", "base64url");
    return presented.length === this.token.length && timingSafeEqual(presented, this.token);
  }
}

/** One locator per process, shared by every database's storage. */
export const datasetLocator = new DatasetLocator();
