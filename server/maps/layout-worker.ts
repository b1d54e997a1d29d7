/**
 * A table's map laid out off the server's event loop, in a worker thread of its own: first the two principal
 * components of its vectors (a fraction of a second), then UMAP over their 32 strongest components (embedding-atlas's
 * WebAssembly NN-descent and UMAP), each posted back as it is ready, the refined layout with the projection it was
 * made from. Or another version's rows placed onto a refined layout: rows whose vector the layout holds keep their
 * places, the others go among their nearest laid-out rows.
 *
 * Written in erasable TypeScript with relative imports only: Node loads it as it is (types stripped).
 */
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";
import { fitToSquare, normalizeRows, placeAmong, principalComponents, project, type Basis } from "./layout-math.ts";

interface Vectors {
  vectors: Float32Array;
  n: number;
  dim: number;
  metric: "l2" | "cosine";
}

/** "preview": the principal components of a sample alone, while every row is read. */
export interface LayoutJob extends Vectors {
  kind: "layout" | "preview";
  epochs: number;
  neighbors: number;
  seed: number;
}

/** The space a refined layout was made in: the basis (its mean, then k components, each dim values) and every row in it. */
export interface Projection {
  k: number;
  basis: Float32Array;
  reduced: Float32Array;
}

export interface PlaceJob extends Vectors {
  kind: "place";
  ids: BigUint64Array;
  onto: { ids: BigUint64Array; x: Float32Array; y: Float32Array; projection: Projection };
}

export type LayoutMessage =
  | { stage: "first"; x: Float32Array; y: Float32Array }
  | { stage: "refined"; x: Float32Array; y: Float32Array; projection: Projection }
  | { stage: "placed"; x: Float32Array; y: Float32Array; placed: Uint8Array }
  | { stage: "failed"; message: string };

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
  const arrays =
    message.stage === "failed"
      ? []
      : [
          message.x,
          message.y,
          ...(message.stage === "refined" ? [message.projection.basis, message.projection.reduced] : []),
          ...(message.stage === "placed" ? [message.placed] : []),
        ];
  parentPort!.postMessage(
    message,
    arrays.map((a) => a.buffer as ArrayBuffer),
  );
}

const packed = (basis: Basis): Float32Array => {
  const out = new Float32Array((basis.k + 1) * basis.dim);
  out.set(basis.mean);
  out.set(basis.components, basis.dim);
  return out;
};

async function layOut(job: LayoutJob) {
  const { vectors, n, dim } = job;
  if (job.metric === "cosine") normalizeRows(vectors, n, dim);
  // A preview is a first look: one pass of the subspace iteration, over 2,000 of its rows, is enough for it and takes
  // a fifth of the time.
  const preview = job.kind === "preview";
  const plane = principalComponents(vectors, n, dim, 2, { sample: preview ? 2_000 : 5_000, seed: job.seed, passes: preview ? 1 : 2 });
  const first = fitToSquare(project(vectors, n, plane), n);
  post({ stage: "first", x: first.x.slice(), y: first.y.slice() });
  if (job.kind === "preview") return;
  const basis = principalComponents(vectors, n, dim, Math.min(UMAP_INPUT_DIM, dim), { sample: 10_000, seed: job.seed });
  const reduced = project(vectors, n, basis);
  const projection = { k: basis.k, basis: packed(basis), reduced };
  if (n <= job.neighbors + 1) {
    // Too few rows for neighbourhoods: the principal components are the layout.
    post({ stage: "refined", ...first, projection });
    return;
  }
  const { createUMAP } = await umapModule();
  const umap = await createUMAP(n, basis.k, 2, reduced, {
    nNeighbors: job.neighbors,
    nEpochs: job.epochs,
    negativeSampleRate: 3,
    seed: job.seed,
  });
  try {
    await umap.run();
    post({ stage: "refined", ...fitToSquare(new Float32Array(umap.embedding), n), projection });
  } finally {
    umap.destroy();
  }
}

/** Whether a row's reduced vector is the one the layout holds for it (the same vector projected the same way). */
function unchanged(a: Float32Array, at: number, b: Float32Array, bt: number, k: number): boolean {
  for (let c = 0; c < k; c++) if (a[at + c] !== b[bt + c]) return false;
  return true;
}

function place(job: PlaceJob) {
  const { vectors, n, dim, onto } = job;
  const { k } = onto.projection;
  if (job.metric === "cosine") normalizeRows(vectors, n, dim);
  const basis = { dim, k, mean: onto.projection.basis.subarray(0, dim), components: onto.projection.basis.subarray(dim) };
  const reduced = project(vectors, n, basis);
  const laidAt = new Map<bigint, number>();
  onto.ids.forEach((id, j) => laidAt.set(id, j));
  const x = new Float32Array(n);
  const y = new Float32Array(n);
  const placed = new Uint8Array(n);
  const moving: number[] = [];
  for (let i = 0; i < n; i++) {
    const j = laidAt.get(job.ids[i]);
    if (j !== undefined && unchanged(reduced, i * k, onto.projection.reduced, j * k, k)) {
      x[i] = onto.x[j];
      y[i] = onto.y[j];
    } else {
      placed[i] = 1;
      moving.push(i);
    }
  }
  const rows = new Float32Array(moving.length * k);
  moving.forEach((i, r) => rows.set(reduced.subarray(i * k, i * k + k), r * k));
  const at = placeAmong(rows, moving.length, onto.projection.reduced, onto.ids.length, k, onto);
  moving.forEach((i, r) => {
    x[i] = at.x[r];
    y[i] = at.y[r];
  });
  post({ stage: "placed", x, y, placed });
}

// The job comes as a message with its vectors transferred: as workerData they would be copied (2.5 s for 100,000 × 768).
parentPort?.once("message", (job: LayoutJob | PlaceJob) => {
  (job.kind === "place" ? Promise.resolve().then(() => place(job)) : layOut(job)).catch((error: unknown) =>
    post({ stage: "failed", message: error instanceof Error ? error.message : String(error) }),
  );
});
