import { clauseCount, type FieldRef, type Node } from './lucene.ts';
import { Bits, complementOf, countOf, hasDoc, intersectionOf, listLimit, toBits, unionOf, type DocSet } from './docset.ts';

/**
 * A search tree turned into work over the documents of an endpoint. Each clause becomes a Plan: how many documents
 * it may pass (`size`, an upper bound), the set of them (`set`), and a test of one document (`test`). AND starts from
 * its smallest child when that child is small, and tests its other children on those documents only; otherwise
 * sets are combined as bitmaps. No plan reads records: every leaf is a lookup in the search index's postings,
 * dictionaries and per-document columns (fields.ts), so a query costs at most a few passes over a column.
 */
export type Plan = { size: number; set(): DocSet; test(d: number): boolean };

/** A clause the endpoint cannot answer, or a value a field does not take: a 400 naming the field and the rule. */
export class BadQuery extends Error {
  override name = 'BadQuery';
}

/** A leaf of the tree: a clause on one field. */
export type Leaf = Exclude<Node, { type: 'and' | 'or' | 'not' | 'all' }>;

/** What an endpoint's fields give the planner. */
export type Fields = {
  docCount: number;
  /** The plan of one leaf on a named field (throws BadQuery for an unknown field or a value it does not take). */
  leaf(leaf: Leaf & { field: FieldRef }, budget: Budget): Plan;
  /** The fields a term without a field is looked for in (any of them may match). */
  defaultFields: readonly string[];
};

/**
 * Per-query bounds, enforced here and nowhere else: the number of clauses, and how many dictionary entries the
 * trailing wildcards of one query may expand to. A query past them is refused before any work is done (clauses) or
 * as soon as an expansion passes the bound, with a message that names the bound.
 */
export const LIMITS = { clauses: 256, expansions: 20_000 } as const;

export class Budget {
  expansions = 0;
  constructor(readonly limits: { clauses: number; expansions: number } = LIMITS) {}
  expand(n: number, what: string): void {
    this.expansions += n;
    if (this.expansions > this.limits.expansions) {
      throw new BadQuery(`search: ${what} expands to more than ${this.limits.expansions} dictionary entries in all; make the wildcard's stem longer`);
    }
  }
}

/** Checks a tree's size against the limits (before planning). */
export function checkCost(tree: Node, limits = LIMITS): void {
  const n = clauseCount(tree);
  if (n > limits.clauses) throw new BadQuery(`search has ${n} clauses; at most ${limits.clauses} are allowed`);
}

export function planOf(tree: Node, fields: Fields, budget = new Budget()): Plan {
  const N = fields.docCount;
  switch (tree.type) {
    case 'all':
      return allPlan(N);
    case 'not': {
      const child = planOf(tree.child, fields, budget);
      return { size: N, set: () => complementOf(child.set(), N), test: (d) => !child.test(d) };
    }
    case 'or': {
      const children = tree.children.map((c) => planOf(c, fields, budget));
      return {
        size: Math.min(N, children.reduce((n, c) => n + c.size, 0)),
        set: () => unionOf(children.map((c) => c.set()), N),
        test: (d) => children.some((c) => c.test(d)),
      };
    }
    case 'and': {
      const children = tree.children.map((c) => planOf(c, fields, budget)).sort((a, b) => a.size - b.size);
      return {
        size: children[0]!.size,
        set: () => andSet(children, N),
        test: (d) => children.every((c) => c.test(d)),
      };
    }
    default: {
      if (tree.field) return fields.leaf(tree as Leaf & { field: FieldRef }, budget);
      const any = fields.defaultFields.map((name) => {
        try {
          return fields.leaf({ ...tree, field: { name, exact: false } } as Leaf & { field: FieldRef }, budget);
        } catch (err) {
          if (err instanceof BadQuery) return null;
          throw err;
        }
      });
      const plans = any.filter((p): p is Plan => p !== null);
      if (plans.length === 0) throw new BadQuery(`search: a term without a field cannot be read as ${fields.defaultFields.join(', ')}; name the field (field:term)`);
      return orOf(plans, N);
    }
  }
}

function orOf(plans: Plan[], N: number): Plan {
  if (plans.length === 1) return plans[0]!;
  return {
    size: Math.min(N, plans.reduce((n, c) => n + c.size, 0)),
    set: () => unionOf(plans.map((c) => c.set()), N),
    test: (d) => plans.some((c) => c.test(d)),
  };
}

function andSet(children: readonly Plan[], N: number): DocSet {
  const first = children[0]!;
  if (first.size <= listLimit(N)) {
    const base = first.set();
    const list = base instanceof Bits ? null : base;
    if (list) {
      const out = new Uint32Array(list.length);
      let n = 0;
      outer: for (let i = 0; i < list.length; i++) {
        const d = list[i]!;
        for (let c = 1; c < children.length; c++) if (!children[c]!.test(d)) continue outer;
        out[n++] = d;
      }
      return out.subarray(0, n);
    }
  }
  let acc: DocSet = first.set();
  for (let c = 1; c < children.length; c++) {
    if (!(acc instanceof Bits) || countOf(acc) <= listLimit(N)) {
      // Few left: test them rather than build the next child's whole set.
      const list = acc instanceof Bits ? listOfBits(acc) : acc;
      const rest = children.slice(c);
      const out = new Uint32Array(list.length);
      let n = 0;
      outer: for (let i = 0; i < list.length; i++) {
        const d = list[i]!;
        for (const r of rest) if (!r.test(d)) continue outer;
        out[n++] = d;
      }
      return out.subarray(0, n);
    }
    acc = intersectionOf(acc, children[c]!.set(), N);
  }
  return acc;
}

function listOfBits(bits: Bits): Uint32Array {
  const out = new Uint32Array(bits.count());
  let n = 0;
  const w = bits.words;
  for (let i = 0; i < w.length; i++) {
    let x = w[i]!;
    while (x !== 0) {
      const low = x & -x;
      out[n++] = (i << 5) + (31 - Math.clz32(low));
      x ^= low;
    }
  }
  return out;
}

export function allPlan(N: number): Plan {
  return {
    size: N,
    set: () => {
      const b = new Bits(N);
      b.addRange(0, N);
      return b;
    },
    test: () => true,
  };
}

export const NONE: Plan = { size: 0, set: () => new Uint32Array(0), test: () => false };

/** A plan from a known set (its test looks the document up in it). */
export function setPlan(set: DocSet): Plan {
  return { size: countOf(set), set: () => set, test: (d) => hasDoc(set, d) };
}

/** A plan from a test over every document (a column that has no grouped rows): the set is one pass. */
export function scanPlan(N: number, test: (d: number) => boolean, size = N): Plan {
  let made: DocSet | null = null;
  return {
    size,
    set: () => {
      if (made) return made;
      const bits = new Bits(N);
      for (let d = 0; d < N; d++) if (test(d)) bits.add(d);
      return (made = bits);
    },
    test,
  };
}

/** Makes sure the plan's set is a bitmap or list the caller may keep. */
export function evaluate(plan: Plan, N: number): DocSet {
  const set = plan.set();
  return set instanceof Bits || set.length <= listLimit(N) ? set : toBits(set, N);
}
