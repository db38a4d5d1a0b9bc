import { describe, expect, it } from "vitest";
import {
  type CsrMatrix,
  gaussianGenerator,
  jacobiEigen,
  multiplySparse,
  orthonormalize,
  randomizedSvd,
  transposeCsr,
} from "../../../src/index/embed/linalg.js";

function csrFromDense(dense: number[][]): CsrMatrix {
  const rows = dense.length;
  const columns = dense[0]?.length ?? 0;
  const rowStart = new Int32Array(rows + 1);
  const columnIndex: number[] = [];
  const values: number[] = [];
  dense.forEach((row, i) => {
    row.forEach((value, j) => {
      if (value !== 0) {
        columnIndex.push(j);
        values.push(value);
      }
    });
    rowStart[i + 1] = columnIndex.length;
  });
  return {
    rows,
    columns,
    rowStart,
    columnIndex: Int32Array.from(columnIndex),
    values: Float32Array.from(values),
  };
}

describe("sparse products", () => {
  it("multiplies by A and by its transpose", () => {
    const dense = [
      [1, 0, 2],
      [0, 0, 3],
      [4, 5, 0],
      [0, 6, 0],
    ];
    const a = csrFromDense(dense);
    // X is 3 × 2.
    const x = Float32Array.from([1, 2, 3, 4, 5, 6]);
    const y = new Float64Array(8);
    multiplySparse(a, x, 2, y);
    expect([...y]).toEqual([11, 14, 15, 18, 19, 28, 18, 24]);
    const at = transposeCsr(a);
    expect(at.rows).toBe(3);
    const z = new Float64Array(6);
    multiplySparse(at, Float32Array.from([1, 1, 1, 1, 1, 1, 1, 1]), 2, z);
    expect([...z]).toEqual([5, 5, 11, 11, 5, 5]);
  });
});

describe("orthonormalize", () => {
  it("gives orthonormal columns spanning the input, and zeroes dependent columns", () => {
    const random = gaussianGenerator(4);
    const rows = 50;
    const width = 6;
    const m = new Float64Array(rows * width);
    for (let i = 0; i < m.length; i++) m[i] = random();
    // Column 3 = 2·column 0 − column 1: dependent.
    for (let i = 0; i < rows; i++)
      m[i * width + 3] = 2 * (m[i * width] as number) - (m[i * width + 1] as number);
    orthonormalize(m, rows, width);
    for (let a = 0; a < width; a++) {
      for (let b = 0; b < width; b++) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += (m[i * width + a] as number) * (m[i * width + b] as number);
        const expected = a === b && a !== 3 ? 1 : 0;
        expect(dot).toBeCloseTo(expected, 10);
      }
    }
  });
});

describe("jacobiEigen", () => {
  it("diagonalises a symmetric matrix", () => {
    const a = Float64Array.from([4, 1, 2, 1, 3, 0, 2, 0, 5]);
    const copy = Float64Array.from(a);
    const { values, vectors } = jacobiEigen(a, 3);
    expect(values[0]).toBeGreaterThanOrEqual(values[1] as number);
    expect(values[1]).toBeGreaterThanOrEqual(values[2] as number);
    // A·v = λ·v for every pair, and the trace is kept.
    for (let t = 0; t < 3; t++) {
      for (let i = 0; i < 3; i++) {
        let av = 0;
        for (let k = 0; k < 3; k++) av += (copy[i * 3 + k] as number) * (vectors[k * 3 + t] as number);
        expect(av).toBeCloseTo((values[t] as number) * (vectors[i * 3 + t] as number), 10);
      }
    }
    expect((values[0] as number) + (values[1] as number) + (values[2] as number)).toBeCloseTo(12, 10);
  });
});

describe("randomizedSvd", () => {
  it("recovers the singular values and vectors of a low-rank matrix", () => {
    // A = Σ_k s_k · u_k v_kᵀ with orthonormal u, v and s = 9, 5, 2: a 40 × 30 matrix of rank 3.
    const rows = 40;
    const columns = 30;
    const random = gaussianGenerator(7);
    const u = new Float64Array(rows * 3);
    const v = new Float64Array(columns * 3);
    for (let i = 0; i < u.length; i++) u[i] = random();
    for (let i = 0; i < v.length; i++) v[i] = random();
    orthonormalize(u, rows, 3);
    orthonormalize(v, columns, 3);
    const s = [9, 5, 2];
    const dense: number[][] = [];
    for (let i = 0; i < rows; i++) {
      const row: number[] = [];
      for (let j = 0; j < columns; j++) {
        let value = 0;
        for (let k = 0; k < 3; k++)
          value += (s[k] as number) * (u[i * 3 + k] as number) * (v[j * 3 + k] as number);
        row.push(Math.fround(value));
      }
      dense.push(row);
    }
    const svd = randomizedSvd(csrFromDense(dense), { rank: 3, oversampling: 5, powerIterations: 2, seed: 1 });
    expect(svd.rank).toBe(3);
    expect(svd.sigma[0]).toBeCloseTo(9, 4);
    expect(svd.sigma[1]).toBeCloseTo(5, 4);
    expect(svd.sigma[2]).toBeCloseTo(2, 4);
    for (let k = 0; k < 3; k++) {
      let dot = 0;
      for (let i = 0; i < rows; i++) dot += (svd.u[i * 3 + k] as number) * (u[i * 3 + k] as number);
      expect(Math.abs(dot)).toBeCloseTo(1, 4);
    }
    // Same input and seed: identical output.
    const again = randomizedSvd(csrFromDense(dense), {
      rank: 3,
      oversampling: 5,
      powerIterations: 2,
      seed: 1,
    });
    expect(again.u).toEqual(svd.u);
  });

  it("caps the rank at the matrix size", () => {
    const svd = randomizedSvd(
      csrFromDense([
        [2, 0],
        [0, 1],
      ]),
      { rank: 10 },
    );
    expect(svd.rank).toBe(2);
    expect([...svd.sigma].map((x) => Math.round(x * 1e6) / 1e6)).toEqual([2, 1]);
  });
});
