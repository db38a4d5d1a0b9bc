/**
 * The numerical kernels of the code model: sparse matrices (CSR in typed arrays), a seeded Gaussian
 * generator, QR by modified Gram-Schmidt, Jacobi eigen-decomposition and randomized truncated SVD
 * (Halko, Martinsson & Tropp 2011, algorithm 4.4 with 5.1).
 *
 * Every loop runs in a fixed order, so the same input gives bit-identical output. The hot loops are
 * unrolled by hand (several sparse entries, columns or rows per pass): V8 does not vectorise, and doing
 * more arithmetic per load roughly halves their time.
 */

/** Sparse matrix in compressed sparse row form. */
export interface CsrMatrix {
  rows: number;
  columns: number;
  /** rows + 1 offsets into columnIndex/values; row i is [rowStart[i], rowStart[i + 1]). */
  rowStart: Int32Array;
  /** Column of each stored entry, ascending within a row. */
  columnIndex: Int32Array;
  values: Float32Array;
}

/** Aᵀ in CSR form (entries of each row in ascending column order). */
export function transposeCsr(a: CsrMatrix): CsrMatrix {
  const nonZeros = a.rowStart[a.rows] as number;
  const rowStart = new Int32Array(a.columns + 1);
  for (let p = 0; p < nonZeros; p++) {
    const c = (a.columnIndex[p] as number) + 1;
    rowStart[c] = (rowStart[c] as number) + 1;
  }
  for (let c = 0; c < a.columns; c++) rowStart[c + 1] = (rowStart[c + 1] as number) + (rowStart[c] as number);
  const next = rowStart.slice(0, a.columns);
  const columnIndex = new Int32Array(nonZeros);
  const values = new Float32Array(nonZeros);
  for (let i = 0; i < a.rows; i++) {
    const end = a.rowStart[i + 1] as number;
    for (let p = a.rowStart[i] as number; p < end; p++) {
      const c = a.columnIndex[p] as number;
      const at = next[c] as number;
      columnIndex[at] = i;
      values[at] = a.values[p] as number;
      next[c] = at + 1;
    }
  }
  return { rows: a.columns, columns: a.rows, rowStart, columnIndex, values };
}

/**
 * Y = A·X with X (a.columns × width) and Y (a.rows × width) dense and row-major. X is Float32, which halves
 * the memory traffic of gathering its rows; sums are accumulated in double precision.
 */
export function multiplySparse(a: CsrMatrix, x: Float32Array, width: number, y: Float64Array): void {
  const { rowStart, columnIndex, values } = a;
  const acc = new Float64Array(width);
  for (let i = 0; i < a.rows; i++) {
    acc.fill(0);
    const end = rowStart[i + 1] as number;
    let p = rowStart[i] as number;
    for (; p + 7 < end; p += 8) {
      const v0 = values[p] as number;
      const v1 = values[p + 1] as number;
      const v2 = values[p + 2] as number;
      const v3 = values[p + 3] as number;
      const v4 = values[p + 4] as number;
      const v5 = values[p + 5] as number;
      const v6 = values[p + 6] as number;
      const v7 = values[p + 7] as number;
      const x0 = (columnIndex[p] as number) * width;
      const x1 = (columnIndex[p + 1] as number) * width;
      const x2 = (columnIndex[p + 2] as number) * width;
      const x3 = (columnIndex[p + 3] as number) * width;
      const x4 = (columnIndex[p + 4] as number) * width;
      const x5 = (columnIndex[p + 5] as number) * width;
      const x6 = (columnIndex[p + 6] as number) * width;
      const x7 = (columnIndex[p + 7] as number) * width;
      for (let c = 0; c < width; c++) {
        acc[c] =
          (acc[c] as number) +
          (v0 * (x[x0 + c] as number) +
            v1 * (x[x1 + c] as number) +
            v2 * (x[x2 + c] as number) +
            v3 * (x[x3 + c] as number) +
            v4 * (x[x4 + c] as number) +
            v5 * (x[x5 + c] as number) +
            v6 * (x[x6 + c] as number) +
            v7 * (x[x7 + c] as number));
      }
    }
    for (; p + 3 < end; p += 4) {
      const v0 = values[p] as number;
      const v1 = values[p + 1] as number;
      const v2 = values[p + 2] as number;
      const v3 = values[p + 3] as number;
      const x0 = (columnIndex[p] as number) * width;
      const x1 = (columnIndex[p + 1] as number) * width;
      const x2 = (columnIndex[p + 2] as number) * width;
      const x3 = (columnIndex[p + 3] as number) * width;
      for (let c = 0; c < width; c++) {
        acc[c] =
          (acc[c] as number) +
          (v0 * (x[x0 + c] as number) +
            v1 * (x[x1 + c] as number) +
            v2 * (x[x2 + c] as number) +
            v3 * (x[x3 + c] as number));
      }
    }
    for (; p < end; p++) {
      const v = values[p] as number;
      const x0 = (columnIndex[p] as number) * width;
      for (let c = 0; c < width; c++) acc[c] = (acc[c] as number) + v * (x[x0 + c] as number);
    }
    y.set(acc, i * width);
  }
}

/** Scales every column of a rows × width row-major matrix to unit length (zero columns stay zero). */
export function normalizeColumns(matrix: Float64Array, rows: number, width: number): void {
  const norms = new Float64Array(width);
  for (let i = 0; i < rows; i++) {
    const base = i * width;
    for (let c = 0; c < width; c++) norms[c] = (norms[c] as number) + (matrix[base + c] as number) ** 2;
  }
  for (let c = 0; c < width; c++) norms[c] = (norms[c] as number) > 0 ? 1 / Math.sqrt(norms[c] as number) : 0;
  for (let i = 0; i < rows; i++) {
    const base = i * width;
    for (let c = 0; c < width; c++) matrix[base + c] = (matrix[base + c] as number) * (norms[c] as number);
  }
}

/** Σ m[a+i]·m[b+i] for i < n. */
function dot(m: Float64Array, a: number, b: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    s0 += (m[a + i] as number) * (m[b + i] as number);
    s1 += (m[a + i + 1] as number) * (m[b + i + 1] as number);
  }
  if (i < n) s0 += (m[a + i] as number) * (m[b + i] as number);
  return s0 + s1;
}

/** m[to+i] −= r·m[from+i] for i < n. */
function subtractScaled(m: Float64Array, to: number, from: number, r: number, n: number): void {
  for (let i = 0; i < n; i++) m[to + i] = (m[to + i] as number) - r * (m[from + i] as number);
}

/**
 * Orthonormalises the columns of a rows × width row-major matrix in place by modified Gram-Schmidt, in its
 * right-looking form: once q_k is final it is projected out of every later column (four columns per pass
 * over the rows). A column that loses most of its norm to the projections is projected once more ("twice
 * is enough"); a column that is numerically dependent on the earlier ones becomes zero.
 */
export function orthonormalize(matrix: Float64Array, rows: number, width: number): void {
  const m = new Float64Array(rows * width); // column-major: every column contiguous
  for (let i = 0; i < rows; i++) {
    for (let c = 0; c < width; c++) m[c * rows + i] = matrix[i * width + c] as number;
  }
  const original = new Float64Array(width);
  for (let c = 0; c < width; c++) original[c] = dot(m, c * rows, c * rows, rows);
  const zero = new Uint8Array(width);
  for (let k = 0; k < width; k++) {
    const qk = k * rows;
    let norm = dot(m, qk, qk, rows);
    if (norm <= 0.25 * (original[k] as number)) {
      for (let q = 0; q < k; q++) {
        if (zero[q]) continue;
        subtractScaled(m, qk, q * rows, dot(m, q * rows, qk, rows), rows);
      }
      norm = dot(m, qk, qk, rows);
    }
    if (norm === 0 || norm <= 1e-24 * (original[k] as number)) {
      zero[k] = 1;
      m.fill(0, qk, qk + rows);
      continue;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < rows; i++) m[qk + i] = (m[qk + i] as number) * scale;

    let j = k + 1;
    for (; j + 3 < width; j += 4) {
      const c0 = j * rows;
      const c1 = c0 + rows;
      const c2 = c1 + rows;
      const c3 = c2 + rows;
      let d0 = 0;
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      for (let i = 0; i < rows; i++) {
        const qi = m[qk + i] as number;
        d0 += qi * (m[c0 + i] as number);
        d1 += qi * (m[c1 + i] as number);
        d2 += qi * (m[c2 + i] as number);
        d3 += qi * (m[c3 + i] as number);
      }
      for (let i = 0; i < rows; i++) {
        const qi = m[qk + i] as number;
        m[c0 + i] = (m[c0 + i] as number) - d0 * qi;
        m[c1 + i] = (m[c1 + i] as number) - d1 * qi;
        m[c2 + i] = (m[c2 + i] as number) - d2 * qi;
        m[c3 + i] = (m[c3 + i] as number) - d3 * qi;
      }
    }
    for (; j < width; j++) subtractScaled(m, j * rows, qk, dot(m, qk, j * rows, rows), rows);
  }
  for (let i = 0; i < rows; i++) {
    for (let c = 0; c < width; c++) matrix[i * width + c] = m[c * rows + i] as number;
  }
}

/**
 * Eigen-decomposition of a symmetric n × n matrix (row-major; destroyed) by cyclic Jacobi rotations.
 * Returns the eigenvalues in descending order and the matching eigenvectors as the columns of `vectors`
 * (row-major n × n).
 */
export function jacobiEigen(
  matrix: Float64Array,
  n: number,
): { values: Float64Array; vectors: Float64Array } {
  const a = matrix;
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  let total = 0;
  for (let i = 0; i < n * n; i++) total += (a[i] as number) ** 2;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += (a[p * n + q] as number) ** 2;
    if (off === 0 || off <= 1e-30 * total) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q] as number;
        if (apq === 0) continue;
        const app = a[p * n + p] as number;
        const aqq = a[q * n + q] as number;
        const theta = (aqq - app) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        // A ← Jᵀ·A·J on rows and columns p and q; V ← V·J.
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p] as number;
          const akq = a[k * n + q] as number;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k] as number;
          const aqk = a[q * n + k] as number;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p] as number;
          const vkq = v[k * n + q] as number;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (x, y) => (a[y * n + y] as number) - (a[x * n + x] as number) || x - y,
  );
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  order.forEach((from, to) => {
    values[to] = a[from * n + from] as number;
    for (let k = 0; k < n; k++) vectors[k * n + to] = v[k * n + from] as number;
  });
  return { values, vectors };
}

/** Seeded standard normal numbers: xoshiro128** and the Box-Muller transform. */
export function gaussianGenerator(seed: number): () => number {
  let s0 = (seed ^ 0x9e3779b9) >>> 0 || 1;
  let s1 = Math.imul(seed ^ 0x85ebca6b, 0xc2b2ae35) >>> 0 || 2;
  let s2 = 0x27d4eb2f;
  let s3 = 0x165667b1;
  const rotl = (x: number, k: number): number => (x << k) | (x >>> (32 - k));
  const next = (): number => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result;
  };
  for (let i = 0; i < 16; i++) next();
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const u1 = (next() + 1) / 4294967297; // (0, 1]
    const u2 = next() / 4294967296;
    const radius = Math.sqrt(-2 * Math.log(u1));
    spare = radius * Math.sin(2 * Math.PI * u2);
    return radius * Math.cos(2 * Math.PI * u2);
  };
}

export interface RandomizedSvdOptions {
  /** Singular triplets wanted. */
  rank: number;
  /** Extra random directions (default 10). */
  oversampling?: number;
  /** Power iterations (default 2). */
  powerIterations?: number;
  seed?: number;
}

export interface TruncatedSvd {
  /** rows × rank, row-major; the sign of each column is fixed so that its largest entry is positive. */
  u: Float64Array;
  /** rank singular values, descending. */
  sigma: Float64Array;
  rank: number;
}

/**
 * Truncated SVD of a sparse matrix by randomized subspace iteration: Y = A·Ω for a Gaussian Ω, Q = qr(Y),
 * q times (Q = qr(A·(Aᵀ·Q))), then the small matrix B = Qᵀ·A is decomposed through the eigenvectors of
 * B·Bᵀ (Jacobi) and U = Q·W. Rank is capped at min(rows, columns).
 */
export function randomizedSvd(a: CsrMatrix, options: RandomizedSvdOptions): TruncatedSvd {
  const { rows, columns } = a;
  const limit = Math.min(rows, columns);
  const rank = Math.max(0, Math.min(options.rank, limit));
  const width = Math.min(limit, rank + Math.max(0, options.oversampling ?? 10));
  const powerIterations = Math.max(0, options.powerIterations ?? 2);
  if (rank === 0) return { u: new Float64Array(0), sigma: new Float64Array(0), rank: 0 };

  const at = transposeCsr(a);
  const random = gaussianGenerator(options.seed ?? 1);
  const single = new Float32Array(Math.max(rows, columns) * width);
  for (let i = 0; i < columns * width; i++) single[i] = random();
  const product = (matrix: CsrMatrix, input: Float64Array | undefined, output: Float64Array): void => {
    if (input) single.set(input);
    multiplySparse(matrix, single, width, output);
  };

  const q = new Float64Array(rows * width);
  const z = new Float64Array(columns * width);
  product(a, undefined, q);
  orthonormalize(q, rows, width);
  for (let iteration = 0; iteration < powerIterations; iteration++) {
    // Only the span matters between the two products; scaling the columns keeps magnitudes in range,
    // and the QR after A·Z restores orthogonality.
    product(at, q, z);
    normalizeColumns(z, columns, width);
    product(a, z, q);
    orthonormalize(q, rows, width);
  }
  // B = Qᵀ·A (width × columns) is held as Bᵀ = Aᵀ·Q; then B·Bᵀ = Σ over rows r of Bᵀ of rᵀ·r.
  product(at, q, z);
  const gram = new Float64Array(width * width);
  let r = 0;
  for (; r + 3 < columns; r += 4) {
    const b0 = r * width;
    const b1 = b0 + width;
    const b2 = b1 + width;
    const b3 = b2 + width;
    for (let i = 0; i < width; i++) {
      const z0 = z[b0 + i] as number;
      const z1 = z[b1 + i] as number;
      const z2 = z[b2 + i] as number;
      const z3 = z[b3 + i] as number;
      const out = i * width;
      for (let j = i; j < width; j++) {
        gram[out + j] =
          (gram[out + j] as number) +
          (z0 * (z[b0 + j] as number) +
            z1 * (z[b1 + j] as number) +
            z2 * (z[b2 + j] as number) +
            z3 * (z[b3 + j] as number));
      }
    }
  }
  for (; r < columns; r++) {
    const b0 = r * width;
    for (let i = 0; i < width; i++) {
      const z0 = z[b0 + i] as number;
      const out = i * width;
      for (let j = i; j < width; j++) gram[out + j] = (gram[out + j] as number) + z0 * (z[b0 + j] as number);
    }
  }
  for (let i = 0; i < width; i++)
    for (let j = 0; j < i; j++) gram[i * width + j] = gram[j * width + i] as number;
  const eigen = jacobiEigen(gram, width);

  const sigma = new Float64Array(rank);
  for (let t = 0; t < rank; t++) sigma[t] = Math.sqrt(Math.max(0, eigen.values[t] as number));
  // U = Q·W[:, :rank].
  const w = eigen.vectors;
  const u = new Float64Array(rows * rank);
  for (let i = 0; i < rows; i++) {
    const qi = i * width;
    const ui = i * rank;
    let c = 0;
    for (; c + 3 < width; c += 4) {
      const q0 = q[qi + c] as number;
      const q1 = q[qi + c + 1] as number;
      const q2 = q[qi + c + 2] as number;
      const q3 = q[qi + c + 3] as number;
      const w0 = c * width;
      const w1 = w0 + width;
      const w2 = w1 + width;
      const w3 = w2 + width;
      for (let t = 0; t < rank; t++) {
        u[ui + t] =
          (u[ui + t] as number) +
          (q0 * (w[w0 + t] as number) +
            q1 * (w[w1 + t] as number) +
            q2 * (w[w2 + t] as number) +
            q3 * (w[w3 + t] as number));
      }
    }
    for (; c < width; c++) {
      const q0 = q[qi + c] as number;
      const w0 = c * width;
      for (let t = 0; t < rank; t++) u[ui + t] = (u[ui + t] as number) + q0 * (w[w0 + t] as number);
    }
  }
  for (let t = 0; t < rank; t++) {
    let largest = 0;
    for (let i = 0; i < rows; i++) {
      const value = u[i * rank + t] as number;
      if (Math.abs(value) > Math.abs(largest)) largest = value;
    }
    if (largest < 0) for (let i = 0; i < rows; i++) u[i * rank + t] = -(u[i * rank + t] as number);
  }
  return { u, sigma, rank };
}
