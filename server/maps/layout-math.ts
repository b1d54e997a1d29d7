/**
 * The arithmetic of a table's map: principal components of its vectors, found from a sample by randomized subspace
 * iteration (a few passes over the sample instead of a dim × dim covariance), the vectors projected onto them, and a
 * layout scaled into the square [-1, 1]² that the console draws.
 *
 * Written in erasable TypeScript with no imports: the layout worker (layout-worker.ts) runs it as Node loads it
 * (types stripped), and the server's own code uses it too.
 */

/** A seeded pseudo-random source (mulberry32): the same table and settings give the same layout. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Scales each row to unit length, so that Euclidean distance orders rows as cosine distance does. */
export function normalizeRows(vectors: Float32Array, n: number, dim: number): void {
  for (let i = 0; i < n; i++) {
    const at = i * dim;
    let sum = 0;
    for (let j = 0; j < dim; j++) sum += vectors[at + j] * vectors[at + j];
    const scale = sum > 0 ? 1 / Math.sqrt(sum) : 0;
    for (let j = 0; j < dim; j++) vectors[at + j] *= scale;
  }
}

export interface Basis {
  dim: number;
  k: number;
  mean: Float32Array;
  /** k rows of dim values, the strongest component first. */
  components: Float32Array;
}

/** Orthonormalizes the q columns of a rows × q matrix (row-major) in place (modified Gram-Schmidt). */
function orthonormalizeColumns(m: Float64Array, rows: number, q: number, random: () => number): void {
  for (let c = 0; c < q; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let r = 0; r < rows; r++) dot += m[r * q + c] * m[r * q + p];
      for (let r = 0; r < rows; r++) m[r * q + c] -= dot * m[r * q + p];
    }
    let norm = 0;
    for (let r = 0; r < rows; r++) norm += m[r * q + c] * m[r * q + c];
    if (norm < 1e-24) {
      // A direction the data lacks: any other orthogonal one serves.
      for (let r = 0; r < rows; r++) m[r * q + c] = random() - 0.5;
      c--;
      continue;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let r = 0; r < rows; r++) m[r * q + c] *= scale;
  }
}

/** Eigenvectors of a small symmetric matrix (cyclic Jacobi), as columns, with their eigenvalues. */
function symmetricEigen(a: Float64Array, size: number): { values: Float64Array; vectors: Float64Array } {
  const m = Float64Array.from(a);
  const v = new Float64Array(size * size);
  for (let i = 0; i < size; i++) v[i * size + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < size; p++) for (let q = p + 1; q < size; q++) off += m[p * size + q] * m[p * size + q];
    if (off < 1e-22) break;
    for (let p = 0; p < size; p++) {
      for (let q = p + 1; q < size; q++) {
        const apq = m[p * size + q];
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (m[q * size + q] - m[p * size + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < size; k++) {
          const akp = m[k * size + p];
          const akq = m[k * size + q];
          m[k * size + p] = c * akp - s * akq;
          m[k * size + q] = s * akp + c * akq;
        }
        for (let k = 0; k < size; k++) {
          const apk = m[p * size + k];
          const aqk = m[q * size + k];
          m[p * size + k] = c * apk - s * aqk;
          m[q * size + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < size; k++) {
          const vkp = v[k * size + p];
          const vkq = v[k * size + q];
          v[k * size + p] = c * vkp - s * vkq;
          v[k * size + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(size);
  for (let i = 0; i < size; i++) values[i] = m[i * size + i];
  return { values, vectors: v };
}

/**
 * The k strongest principal components of the rows, from an evenly spread sample of at most `sample` of them:
 * a random subspace of k + 8 directions refined by `passes` rounds of multiplying through the centred sample,
 * then rotated into the components by the eigenvectors of the sample's covariance within it.
 */
export function principalComponents(
  vectors: Float32Array,
  n: number,
  dim: number,
  k: number,
  { sample = 10_000, passes = 2, seed = 1 }: { sample?: number; passes?: number; seed?: number } = {},
): Basis {
  const random = seededRandom(seed);
  const rows = Math.min(n, sample);
  // Components the sample cannot give (fewer rows than k) stay zero.
  if (rows === 0) return { dim, k, mean: new Float32Array(dim), components: new Float32Array(k * dim) };
  const stride = n / rows;
  const picked = new Int32Array(rows);
  for (let r = 0; r < rows; r++) picked[r] = Math.floor(r * stride);
  const mean = new Float32Array(dim);
  const sums = new Float64Array(dim);
  for (const i of picked) for (let j = 0; j < dim; j++) sums[j] += vectors[i * dim + j];
  for (let j = 0; j < dim; j++) mean[j] = sums[j] / rows;
  // No more directions than the sample has rows, or orthonormalizing them would never end.
  const q = Math.min(dim, k + 8, rows);
  // Z: dim × q, the subspace; Y: rows × q, the sample within it.
  const z = new Float64Array(dim * q);
  for (let i = 0; i < z.length; i++) z[i] = random() - 0.5;
  orthonormalizeColumns(z, dim, q, random);
  const y = new Float64Array(rows * q);
  const centred = new Float64Array(dim);
  const sampleTimesZ = () => {
    y.fill(0);
    for (let r = 0; r < rows; r++) {
      const at = picked[r] * dim;
      for (let j = 0; j < dim; j++) centred[j] = vectors[at + j] - mean[j];
      for (let j = 0; j < dim; j++) {
        const x = centred[j];
        if (x === 0) continue;
        const zr = j * q;
        const yr = r * q;
        for (let c = 0; c < q; c++) y[yr + c] += x * z[zr + c];
      }
    }
  };
  for (let pass = 0; pass < passes; pass++) {
    sampleTimesZ();
    orthonormalizeColumns(y, rows, q, random);
    z.fill(0);
    for (let r = 0; r < rows; r++) {
      const at = picked[r] * dim;
      const yr = r * q;
      for (let j = 0; j < dim; j++) {
        const x = vectors[at + j] - mean[j];
        if (x === 0) continue;
        const zr = j * q;
        for (let c = 0; c < q; c++) z[zr + c] += x * y[yr + c];
      }
    }
    orthonormalizeColumns(z, dim, q, random);
  }
  sampleTimesZ();
  const covariance = new Float64Array(q * q);
  for (let r = 0; r < rows; r++) {
    const yr = r * q;
    for (let a = 0; a < q; a++) for (let b = a; b < q; b++) covariance[a * q + b] += y[yr + a] * y[yr + b];
  }
  for (let a = 0; a < q; a++) for (let b = 0; b < a; b++) covariance[a * q + b] = covariance[b * q + a];
  const { values, vectors: rotation } = symmetricEigen(covariance, q);
  const order = [...values.keys()].sort((a, b) => values[b] - values[a]).slice(0, k);
  const components = new Float32Array(k * dim);
  order.forEach((column, component) => {
    for (let j = 0; j < dim; j++) {
      let sum = 0;
      for (let c = 0; c < q; c++) sum += z[j * q + c] * rotation[c * q + column];
      components[component * dim + j] = sum;
    }
  });
  return { dim, k, mean, components };
}

/** Every row's coordinates along the basis's components: n × k values, row-major. */
export function project(vectors: Float32Array, n: number, basis: Basis): Float32Array {
  const { dim, k, mean, components } = basis;
  const out = new Float32Array(n * k);
  const centred = new Float32Array(dim);
  for (let i = 0; i < n; i++) {
    const at = i * dim;
    for (let j = 0; j < dim; j++) centred[j] = vectors[at + j] - mean[j];
    for (let c = 0; c < k; c++) {
      const row = c * dim;
      let sum = 0;
      for (let j = 0; j < dim; j++) sum += centred[j] * components[row + j];
      out[i * k + c] = sum;
    }
  }
  return out;
}

/**
 * Two coordinates per row (interleaved x, y) scaled into [-1, 1]² keeping their proportions, centred; the spread
 * is taken between the 0.5th and 99.5th percentiles so that a few far rows do not squeeze the rest into a dot (they
 * are drawn at the edge instead).
 */
export function fitToSquare(xy: Float32Array, n: number): { x: Float32Array; y: Float32Array } {
  const x = new Float32Array(n);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = xy[2 * i];
    y[i] = xy[2 * i + 1];
  }
  if (n === 0) return { x, y };
  const range = (values: Float32Array) => {
    const sorted = Float32Array.from(values).sort();
    const lo = sorted[Math.floor((n - 1) * 0.005)];
    const hi = sorted[Math.ceil((n - 1) * 0.995)];
    return { lo, hi, mid: (lo + hi) / 2 };
  };
  const rx = range(x);
  const ry = range(y);
  const half = Math.max(rx.hi - rx.lo, ry.hi - ry.lo) / 2;
  const scale = half > 0 ? 0.95 / half : 0;
  for (let i = 0; i < n; i++) {
    x[i] = Math.max(-1, Math.min(1, (x[i] - rx.mid) * scale));
    y[i] = Math.max(-1, Math.min(1, (y[i] - ry.mid) * scale));
  }
  return { x, y };
}

/** Rows (n × k, row-major) grouped under the nearest of a few centres: where a nearest-row search looks first. */
interface Cells {
  centres: Float32Array;
  count: number;
  members: Int32Array[];
}

const squaredDistance = (a: Float32Array, at: number, b: Float32Array, bt: number, k: number) => {
  let sum = 0;
  for (let c = 0; c < k; c++) {
    const d = a[at + c] - b[bt + c];
    sum += d * d;
  }
  return sum;
};

function nearestCentre(rows: Float32Array, at: number, cells: { centres: Float32Array; count: number }, k: number): number {
  let best = 0;
  let bestDistance = Infinity;
  for (let c = 0; c < cells.count; c++) {
    const d = squaredDistance(rows, at, cells.centres, c * k, k);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

/**
 * About √n cells, their centres by four rounds of k-means on a sample; one (every row searched) under 4,096 rows, or
 * for fewer rows to place than there would be cells: putting each laid-out row in its cell costs as much as searching
 * every row for √n rows (2.4 s for 100,000 rows of 32 components, where 50 rows searched whole take a tenth of that).
 */
function cellsOf(rows: Float32Array, n: number, k: number, placing: number): Cells {
  const count = n < 4_096 || placing < Math.sqrt(n) ? 1 : Math.round(Math.sqrt(n));
  const centres = new Float32Array(count * k);
  for (let c = 0; c < count; c++) centres.set(rows.subarray(Math.floor((c * n) / count) * k, Math.floor((c * n) / count) * k + k), c * k);
  const cells = { centres, count };
  if (count > 1) {
    const sample = Math.min(n, count * 40);
    for (let round = 0; round < 4; round++) {
      const sums = new Float64Array(count * k);
      const sizes = new Int32Array(count);
      for (let s = 0; s < sample; s++) {
        const at = Math.floor((s * n) / sample) * k;
        const c = nearestCentre(rows, at, cells, k);
        sizes[c]++;
        for (let j = 0; j < k; j++) sums[c * k + j] += rows[at + j];
      }
      for (let c = 0; c < count; c++) if (sizes[c]) for (let j = 0; j < k; j++) centres[c * k + j] = sums[c * k + j] / sizes[c];
    }
  }
  const lists: number[][] = Array.from({ length: count }, () => []);
  for (let i = 0; i < n; i++) lists[count > 1 ? nearestCentre(rows, i * k, cells, k) : 0].push(i);
  return { ...cells, members: lists.map((l) => Int32Array.from(l)) };
}

/** Cells a nearest-row search reads: enough that a row near a cell's border finds its neighbours across it. */
const PROBED_CELLS = 8;
/** Laid-out rows a placed row is put among. */
const PLACED_AMONG = 5;
/** How far from the nearest laid-out row (a layout spans [-1, 1]) another near row may lie and still say where a row goes. */
const APART = 0.1;

/**
 * Places rows into an existing layout without moving it: each at the mean of its nearest laid-out rows' places
 * (weighted by nearness; when they lie apart, among the most of them that lie together), found in the reduced space the layout
 * was made from. `rows` are m × k, `laid` n × k.
 */
export function placeAmong(
  rows: Float32Array,
  m: number,
  laid: Float32Array,
  n: number,
  k: number,
  place: { x: Float32Array; y: Float32Array },
): { x: Float32Array; y: Float32Array } {
  const x = new Float32Array(m);
  const y = new Float32Array(m);
  if (n === 0) return { x, y };
  const cells = cellsOf(laid, n, k, m);
  const probed = Math.min(PROBED_CELLS, cells.count);
  const centreDistance = new Float64Array(cells.count);
  const order = Int32Array.from({ length: cells.count }, (_, c) => c);
  const best = new Int32Array(PLACED_AMONG);
  const bestDistance = new Float64Array(PLACED_AMONG);
  for (let i = 0; i < m; i++) {
    const at = i * k;
    for (let c = 0; c < cells.count; c++) centreDistance[c] = squaredDistance(rows, at, cells.centres, c * k, k);
    if (cells.count > 1) order.sort((a, b) => centreDistance[a] - centreDistance[b]);
    bestDistance.fill(Infinity);
    best.fill(-1);
    for (let p = 0; p < probed; p++)
      for (const j of cells.members[order[p]]) {
        const d = squaredDistance(rows, at, laid, j * k, k);
        if (d >= bestDistance[PLACED_AMONG - 1]) continue;
        let slot = PLACED_AMONG - 1;
        while (slot > 0 && bestDistance[slot - 1] > d) {
          bestDistance[slot] = bestDistance[slot - 1];
          best[slot] = best[slot - 1];
          slot--;
        }
        bestDistance[slot] = d;
        best[slot] = j;
      }
    let sx = 0;
    let sy = 0;
    let sw = 0;
    const found = best.findIndex((b) => b < 0) < 0 ? PLACED_AMONG : best.findIndex((b) => b < 0);
    const together = (a: number, b: number) => (place.x[best[a]] - place.x[best[b]]) ** 2 + (place.y[best[a]] - place.y[best[b]]) ** 2 <= APART ** 2;
    // Near rows laid out apart (in two groups, say) would put the row between them, where nothing is: it goes among
    // the most of them that lie together, the nearer group when as many do.
    let anchor = 0;
    let most = 0;
    for (let a = 0; a < found; a++) {
      let count = 0;
      for (let b = 0; b < found; b++) if (together(a, b)) count++;
      if (count > most) [anchor, most] = [a, count];
    }
    for (let s = 0; s < found; s++) {
      if (!together(anchor, s)) continue;
      // A row equal to a laid-out one goes where it is.
      const w = 1 / (Math.sqrt(bestDistance[s]) + 1e-9);
      sx += w * place.x[best[s]];
      sy += w * place.y[best[s]];
      sw += w;
    }
    x[i] = sx / sw;
    y[i] = sy / sw;
  }
  return { x, y };
}
