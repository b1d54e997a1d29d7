/**
 * A table's map laid out off the server's event loop, in a worker thread of its own: first the two principal
 * components of its vectors (a fraction of a second), then UMAP over their 32 strongest components (embedding-atlas's
 * WebAssembly NN-descent and UMAP), each posted back as it is ready.
 *
 * Written in erasable TypeScript with relative imports only: Node loads it as it is (types stripped).
 */
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";
import { fitToSquare, normalizeRows, principalComponents, project } from "./layout-math.ts";

export interface LayoutJob {
  vectors: Float32Array;
  n: number;
  dim: number;
  metric: "l2" | "cosine";
  epochs: number;
  neighbors: number;
  seed: number;
}

export type LayoutMessage = { stage: "first" | "refined"; x: Float32Array; y: Float32Array } | { stage: "failed"; message: string };

/** The dimensions UMAP's neighbour search works in: enough to keep neighbourhoods, few enough to be quick. */
const UMAP_INPUT_DIM = 32;

interface Umap {
  run(): Promise<void>;
  readonly embedding: Float32Array;
  destroy(): void;
}

type CreateUmap = (n: number, inputDim: number, outputDim: number, data: Float32Array, options: object) => Promise<Umap>;

/** embedding-atlas's UMAP module alone: the package's root brings its whole viewer and its peers. */
async function umapModule(): Promise<{ createUMAP: CreateUmap }> {
  const root = createRequire(import.meta.url).resolve("embedding-atlas");
  return import(root.replace(/index\.js$/, "umap.js"));
}

function post(message: LayoutMessage) {
  const transfer = "x" in message ? [message.x.buffer as ArrayBuffer, message.y.buffer as ArrayBuffer] : [];
  parentPort!.postMessage(message, transfer);
}

async function layOut(job: LayoutJob) {
  const { vectors, n, dim } = job;
  if (job.metric === "cosine") normalizeRows(vectors, n, dim);
  const first = fitToSquare(project(vectors, n, principalComponents(vectors, n, dim, 2, { sample: 5_000, seed: job.seed })), n);
  if (n <= job.neighbors + 1) {
    // Too few rows for neighbourhoods: the principal components are the layout.
    const same = { x: first.x.slice(), y: first.y.slice() };
    post({ stage: "first", ...first });
    post({ stage: "refined", ...same });
    return;
  }
  post({ stage: "first", ...first });
  const basis = principalComponents(vectors, n, dim, Math.min(UMAP_INPUT_DIM, dim), { sample: 10_000, seed: job.seed });
  const reduced = project(vectors, n, basis);
  const { createUMAP } = await umapModule();
  const umap = await createUMAP(n, basis.k, 2, reduced, {
    nNeighbors: job.neighbors,
    nEpochs: job.epochs,
    negativeSampleRate: 3,
    seed: job.seed,
  });
  try {
    await umap.run();
    post({ stage: "refined", ...fitToSquare(new Float32Array(umap.embedding), n) });
  } finally {
    umap.destroy();
  }
}

// The job comes as a message with its vectors transferred: as workerData they would be copied (2.5 s for 100,000 × 768).
parentPort?.once("message", (job: LayoutJob) => {
  layOut(job).catch((error: unknown) => post({ stage: "failed", message: error instanceof Error ? error.message : String(error) }));
});
