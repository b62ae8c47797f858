import type { Keep, Mark, Scan } from './conditions.ts';
import type { Test } from './column-tests.ts';

/*
 * A column test (column-tests.ts) run over many documents at once: marks, keeps or scans, each a tight loop over a
 * column, one monomorphic function per column type and per form (branch-free or with a branch per document).
 */

/**
 * Whether a filter that passes this share of the documents is mostly one way: then a branch per document is almost
 * always predicted, and is faster than the branch-free form, which writes every document.
 */
const skewed = (share: number): boolean => share < 0.1 || share > 0.9;

/**
 * The test as a batch: sets marks[i] to 1 for each docs[i] (i < n) that passes (that fails, when `negate`), and
 * leaves the other marks as they are, so that an OR group is one pass per term over the same marks. `share` is about
 * which share of the documents the batch marks (see `skewed`).
 */
export function markOf(t: Test, negate: boolean, share = 0.5): Mark {
  const want = negate ? 0 : 1;
  const flip = want ^ 1;
  switch (t.kind) {
    case 'set': {
      const { col, ok } = t;
      if (col instanceof Uint8Array) return skewed(share) ? (docs, n, marks) => markSet8Branch(col, ok, want, docs, n, marks) : (docs, n, marks) => markSet8(col, ok, flip, docs, n, marks);
      if (col instanceof Uint16Array) return skewed(share) ? (docs, n, marks) => markSet16Branch(col, ok, want, docs, n, marks) : (docs, n, marks) => markSet16(col, ok, flip, docs, n, marks);
      return (docs, n, marks) => markSet32(col, ok, want, docs, n, marks);
    }
    case 'range': {
      const { col, lo, hi } = t;
      if (skewed(share)) return (docs, n, marks) => markRangeBranch(col, lo, hi - lo, want, docs, n, marks);
      return (docs, n, marks) => markRange(col, lo, hi - lo, flip, docs, n, marks);
    }
    case 'review': {
      const { decided, received, lo, hi } = t;
      if (skewed(share)) return (docs, n, marks) => markReviewBranch(decided, received, lo, hi - lo, want, docs, n, marks);
      return (docs, n, marks) => markReview(decided, received, lo, hi - lo, flip, docs, n, marks);
    }
    case 'ids': {
      const { lo, hi } = t;
      return (docs, n, marks) => {
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          if ((d >= lo && d < hi ? 1 : 0) === want) marks[i] = 1;
        }
      };
    }
  }
}

// The kernels of `set` tests, one function per column type: each stays monomorphic, so the optimizer keeps it
// compiled (one function seeing u8, u16 and u32 columns in turn was deoptimized and ran several times slower).
// u8 and u16 columns have a table entry for every value (see `qualifierTest` in column-tests.ts): no bounds check.
// The branch-free forms write every document and count those that pass; the `Branch` forms write only those.
function scanSet8(col: Uint8Array, ok: Uint8Array, flip: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) {
    out[n] = d;
    n += ok[col[d]!]! ^ flip;
  }
  return n;
}
function scanSet8Branch(col: Uint8Array, ok: Uint8Array, want: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) if (ok[col[d]!] === want) out[n++] = d;
  return n;
}
function scanSet16(col: Uint16Array, ok: Uint8Array, flip: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) {
    out[n] = d;
    n += ok[col[d]!]! ^ flip;
  }
  return n;
}
function scanSet16Branch(col: Uint16Array, ok: Uint8Array, want: number, lo: number, hi: number, out: Uint32Array): number {
  let n = 0;
  for (let d = lo; d < hi; d++) if (ok[col[d]!] === want) out[n++] = d;
  return n;
}
function scanSet32(col: Uint32Array, ok: Uint8Array, want: number, lo: number, hi: number, out: Uint32Array): number {
  const size = ok.length;
  let n = 0;
  for (let d = lo; d < hi; d++) {
    const v = col[d]!;
    if ((v < size ? ok[v]! : 0) === want) out[n++] = d;
  }
  return n;
}
function markSet8(col: Uint8Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) marks[i]! |= ok[col[docs[i]!]!]! ^ flip;
}
function markSet8Branch(col: Uint8Array, ok: Uint8Array, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) if (ok[col[docs[i]!]!] === want) marks[i] = 1;
}
function markSet16(col: Uint16Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) marks[i]! |= ok[col[docs[i]!]!]! ^ flip;
}
function markSet16Branch(col: Uint16Array, ok: Uint8Array, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) if (ok[col[docs[i]!]!] === want) marks[i] = 1;
}
function markSet32(col: Uint32Array, ok: Uint8Array, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  const size = ok.length;
  for (let i = 0; i < n; i++) {
    const v = col[docs[i]!]!;
    if ((v < size ? ok[v]! : 0) === want) marks[i] = 1;
  }
}

// Day ranges, branch-free: v in [lo, lo + span] is (v - lo) >>> 0 <= span (below lo wraps past span), and lo >= 1
// rules out "no date" (0). A review time needs both dates: -a >>> 31 is 1 for a day number a, 0 for none.
function scanRange(col: Uint32Array, lo: number, span: number, flip: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) {
    out[n] = d;
    n += (((col[d]! - lo) >>> 0 <= span ? 1 : 0) ^ flip);
  }
  return n;
}
function markRange(col: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) marks[i]! |= ((col[docs[i]!]! - lo) >>> 0 <= span ? 1 : 0) ^ flip;
}
function scanRangeBranch(col: Uint32Array, lo: number, span: number, want: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) if (((col[d]! - lo) >>> 0 <= span ? 1 : 0) === want) out[n++] = d;
  return n;
}
function markRangeBranch(col: Uint32Array, lo: number, span: number, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) if (((col[docs[i]!]! - lo) >>> 0 <= span ? 1 : 0) === want) marks[i] = 1;
}
function scanReviewBranch(decided: Uint32Array, received: Uint32Array, lo: number, span: number, want: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) {
    const a = received[d]!;
    const b = decided[d]!;
    if (((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) === want) out[n++] = d;
  }
  return n;
}
function markReviewBranch(decided: Uint32Array, received: Uint32Array, lo: number, span: number, want: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = received[d]!;
    const b = decided[d]!;
    if (((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) === want) marks[i] = 1;
  }
}
function scanReview(decided: Uint32Array, received: Uint32Array, lo: number, span: number, flip: number, from: number, to: number, out: Uint32Array): number {
  let n = 0;
  for (let d = from; d < to; d++) {
    const a = received[d]!;
    const b = decided[d]!;
    out[n] = d;
    n += ((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) ^ flip;
  }
  return n;
}
function markReview(decided: Uint32Array, received: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number, marks: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = received[d]!;
    const b = decided[d]!;
    marks[i]! |= ((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) ^ flip;
  }
}

/**
 * The test over candidates in place: keeps docs[i] (i < n) that pass (that fail, when `negate`), in order, at the
 * front, and returns how many. One pass and branch-free whatever the share: each candidate is written where the next
 * kept one goes, and the count moves on only when it passes.
 */
export function keepOf(t: Test, negate: boolean): Keep {
  const flip = negate ? 1 : 0;
  switch (t.kind) {
    case 'set': {
      const { col, ok } = t;
      if (col instanceof Uint8Array) return (docs, n) => keepSet8(col, ok, flip, docs, n);
      if (col instanceof Uint16Array) return (docs, n) => keepSet16(col, ok, flip, docs, n);
      return (docs, n) => keepSet32(col, ok, flip, docs, n);
    }
    case 'range': {
      const { col, lo, hi } = t;
      return (docs, n) => keepRange(col, lo, hi - lo, flip, docs, n);
    }
    case 'review': {
      const { decided, received, lo, hi } = t;
      return (docs, n) => keepReview(decided, received, lo, hi - lo, flip, docs, n);
    }
    case 'ids': {
      const { lo, hi } = t;
      return (docs, n) => {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          docs[kept] = d;
          kept += (d >= lo && d < hi ? 1 : 0) ^ flip;
        }
        return kept;
      };
    }
  }
}

// The kernels of `keepOf`, one function per column type (monomorphic, as the others above).
function keepSet8(col: Uint8Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    docs[kept] = d;
    kept += ok[col[d]!]! ^ flip;
  }
  return kept;
}
function keepSet16(col: Uint16Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    docs[kept] = d;
    kept += ok[col[d]!]! ^ flip;
  }
  return kept;
}
function keepSet32(col: Uint32Array, ok: Uint8Array, flip: number, docs: Uint32Array, n: number): number {
  const size = ok.length;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const v = col[d]!;
    docs[kept] = d;
    kept += (v < size ? ok[v]! : 0) ^ flip;
  }
  return kept;
}
function keepRange(col: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    docs[kept] = d;
    kept += ((col[d]! - lo) >>> 0 <= span ? 1 : 0) ^ flip;
  }
  return kept;
}
function keepReview(decided: Uint32Array, received: Uint32Array, lo: number, span: number, flip: number, docs: Uint32Array, n: number): number {
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const a = received[d]!;
    const b = decided[d]!;
    docs[kept] = d;
    kept += ((-a >>> 31) & (-b >>> 31) & ((b - a - lo) >>> 0 <= span ? 1 : 0)) ^ flip;
  }
  return kept;
}

/** The test over the ids lo..hi-1 (those that fail, when `negate`), written to `out` ascending. */
export function scanOf(t: Test, negate: boolean, share = 0.5): Scan {
  const want = negate ? 0 : 1;
  const flip = want ^ 1;
  switch (t.kind) {
    case 'set': {
      const { col, ok } = t;
      if (col instanceof Uint8Array) return skewed(share) ? (lo, hi, out) => scanSet8Branch(col, ok, want, lo, hi, out) : (lo, hi, out) => scanSet8(col, ok, flip, lo, hi, out);
      if (col instanceof Uint16Array) return skewed(share) ? (lo, hi, out) => scanSet16Branch(col, ok, want, lo, hi, out) : (lo, hi, out) => scanSet16(col, ok, flip, lo, hi, out);
      return (lo, hi, out) => scanSet32(col, ok, want, lo, hi, out);
    }
    case 'range': {
      const { col, lo: from, hi: to, within } = t;
      const scan = skewed(share) ? scanRangeBranch : scanRange;
      const pass = skewed(share) ? want : flip;
      if (negate || !within) return (lo, hi, out) => scan(col, from, to - from, pass, lo, hi, out);
      // Only where a document can pass: the two id ranges of `within`, in order.
      const [a, b, c, d] = within;
      return (lo, hi, out) => {
        const n = scan(col, from, to - from, pass, Math.max(lo, a), Math.min(hi, b), out);
        const rest = out.subarray(n);
        return n + scan(col, from, to - from, pass, Math.max(lo, c), Math.min(hi, d), rest);
      };
    }
    case 'review': {
      const { decided, received, lo: from, hi: to } = t;
      if (skewed(share)) return (lo, hi, out) => scanReviewBranch(decided, received, from, to - from, want, lo, hi, out);
      return (lo, hi, out) => scanReview(decided, received, from, to - from, flip, lo, hi, out);
    }
    case 'ids': {
      const { lo: from, hi: to } = t;
      return (lo, hi, out) => {
        let n = 0;
        for (let d = lo; d < hi; d++) if ((d >= from && d < to ? 1 : 0) === want) out[n++] = d;
        return n;
      };
    }
  }
}
