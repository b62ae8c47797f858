import { clauseCount, type FieldRef, type Node } from './lucene.ts';
import { Budget, OPENFDA_LIMITS, type Limits, type Refusal } from '../search/budget.ts';
import { Bits, complementOf, countOf, hasDoc, intersectionOf, listLimit, listOfBits, PASS_CHUNK, toBits, unionInto, unionOf, costOf, wordCount, type DocSet } from '../search/docset.ts';

/**
 * A search tree turned into work over the documents of an endpoint. Each clause becomes a Plan: how many documents
 * it may pass (`size`, an upper bound), the set of them (`set`), and a test of one document (`test`). AND starts from
 * its smallest child when that child is small, and tests its other children on those documents only; otherwise
 * sets are combined as bitmaps. No plan reads records: every leaf is a lookup in the search index's postings,
 * dictionaries and per-document columns (fields.ts), so a query costs at most a few passes over a column.
 *
 * Every set made and every pass is counted as work in the query's Budget, and a set is made with the host's turn
 * given back whenever a slice of that work is spent: `set` resolves, it does not return.
 */
export type Plan = { size: number; set(): Promise<DocSet>; test(d: number): boolean };

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
 * openFDA's configuration of the work budget (src/search/budget.ts, `OPENFDA_LIMITS`): the clauses of a query, the
 * dictionary entries the trailing wildcards of one query may expand to, and the work of the whole request in counted
 * steps. A query past them is refused before any work is done (clauses) or as soon as an expansion or the work passes
 * the bound, with a 400 that names the bound.
 */
const refuseOpenFda: Refusal = (bound, max, what) =>
  bound === 'expansions'
    ? new BadQuery(`search: ${what} expands to more than ${max} dictionary entries in all; make the wildcard's stem longer`)
    : new BadQuery(
        `this request needs more than ${max.toLocaleString('en-US')} steps of work (a step is one record read in a pass over a field, or one dictionary entry compared); use fewer clauses or wildcards, a narrower search, or search_after rather than a deep skip`,
      );

/** A budget for one openFDA request: `limits` (OPENFDA_LIMITS; tests give small ones), the host's turn `pause`. */
export function openFdaBudget(limits: Limits = OPENFDA_LIMITS, pause: (() => Promise<void>) | null = null): Budget {
  return new Budget(limits, pause, refuseOpenFda);
}

/** Checks a tree's size against the limits (before planning). */
export function checkCost(tree: Node, limits: Limits = OPENFDA_LIMITS): void {
  const n = clauseCount(tree);
  if (n > limits.clauses) throw new BadQuery(`search has ${n} clauses; at most ${limits.clauses} are allowed`);
}

export async function planOf(tree: Node, fields: Fields, budget = openFdaBudget()): Promise<Plan> {
  const N = fields.docCount;
  switch (tree.type) {
    case 'all':
      return allPlan(N, budget);
    case 'not': {
      const child = await planOf(tree.child, fields, budget);
      return {
        size: N,
        set: async () => {
          const set = await child.set();
          budget.charge(costOf(set) + (wordCount(N)));
          return complementOf(set, N);
        },
        test: (d) => !child.test(d),
      };
    }
    case 'or': {
      const children: Plan[] = [];
      for (const c of tree.children) children.push(await planOf(c, fields, budget));
      return orOf(children, N, budget);
    }
    case 'and': {
      const children: Plan[] = [];
      for (const c of tree.children) children.push(await planOf(c, fields, budget));
      children.sort((a, b) => a.size - b.size);
      return {
        size: children[0]!.size,
        set: () => andSet(children, N, budget),
        test: (d) => children.every((c) => c.test(d)),
      };
    }
    default: {
      if (tree.field) {
        const plan = fields.leaf(tree as Leaf & { field: FieldRef }, budget);
        await budget.turn();
        return plan;
      }
      const any = fields.defaultFields.map((name) => {
        try {
          return fields.leaf({ ...tree, field: { name, exact: false } } as Leaf & { field: FieldRef }, budget);
        } catch (err) {
          if (err instanceof BadQuery) return null;
          throw err;
        }
      });
      await budget.turn();
      const plans = any.filter((p): p is Plan => p !== null);
      if (plans.length === 0) throw new BadQuery(`search: a term without a field cannot be read as ${fields.defaultFields.join(', ')}; name the field (field:term)`);
      return orOf(plans, N, budget);
    }
  }
}

function orOf(plans: Plan[], N: number, budget: Budget): Plan {
  if (plans.length === 1) return plans[0]!;
  return {
    size: Math.min(N, plans.reduce((n, c) => n + c.size, 0)),
    set: () => unionAll(plans, N, budget),
    test: (d) => plans.some((c) => c.test(d)),
  };
}

/** The union of the plans' sets, made one set at a time: few members stay a list, many go into one bitmap. */
async function unionAll(plans: readonly Plan[], N: number, budget: Budget): Promise<DocSet> {
  const lists: DocSet[] = [];
  let listed = 0;
  let acc: Bits | null = null;
  for (const plan of plans) {
    const set = await plan.set();
    budget.charge(costOf(set));
    if (acc) {
      unionInto(acc, set);
    } else {
      lists.push(set);
      listed += set instanceof Bits ? N : set.length;
      if (listed > listLimit(N)) {
        acc = new Bits(N);
        for (const s of lists) unionInto(acc, s);
        lists.length = 0;
      }
    }
    await budget.turn();
  }
  return acc ?? unionOf(lists, N);
}

async function andSet(children: readonly Plan[], N: number, budget: Budget): Promise<DocSet> {
  let acc: DocSet = await children[0]!.set();
  budget.charge(costOf(acc));
  for (let c = 1; c < children.length; c++) {
    if (!(acc instanceof Bits) || countOf(acc) <= listLimit(N)) {
      // Few left: test them rather than build the next child's whole set.
      return testEach(acc instanceof Bits ? listOfBits(acc) : acc, children.slice(c), budget);
    }
    await budget.turn();
    const next = await children[c]!.set();
    budget.charge(costOf(next) + acc.words.length);
    acc = intersectionOf(acc, next, N);
  }
  return acc;
}

/** The members of `list` that pass every plan's test, a chunk at a time. */
async function testEach(list: Uint32Array, rest: readonly Plan[], budget: Budget): Promise<Uint32Array> {
  const out = new Uint32Array(list.length);
  let n = 0;
  for (let lo = 0; lo < list.length; lo += PASS_CHUNK) {
    const hi = Math.min(list.length, lo + PASS_CHUNK);
    outer: for (let i = lo; i < hi; i++) {
      const d = list[i]!;
      for (const r of rest) if (!r.test(d)) continue outer;
      out[n++] = d;
    }
    budget.charge((hi - lo) * rest.length);
    await budget.turn();
  }
  return out.subarray(0, n);
}

export function allPlan(N: number, budget: Budget): Plan {
  return {
    size: N,
    set: async () => {
      budget.charge(wordCount(N));
      const b = new Bits(N);
      b.addRange(0, N);
      return b;
    },
    test: () => true,
  };
}

export const NONE: Plan = { size: 0, set: async () => new Uint32Array(0), test: () => false };

/** A plan from a known set (its test looks the document up in it). */
export function setPlan(set: DocSet): Plan {
  return { size: countOf(set), set: async () => set, test: (d) => hasDoc(set, d) };
}

/** A plan from a test over every document (a column that has no grouped rows): the set is one pass, in chunks. */
export function scanPlan(N: number, test: (d: number) => boolean, budget: Budget, size = N): Plan {
  let made: Bits | null = null;
  return {
    size,
    set: async () => {
      if (made) return made;
      const bits = new Bits(N);
      for (let lo = 0; lo < N; lo += PASS_CHUNK) {
        const hi = Math.min(N, lo + PASS_CHUNK);
        for (let d = lo; d < hi; d++) if (test(d)) bits.add(d);
        budget.charge(hi - lo);
        await budget.turn();
      }
      return (made = bits);
    },
    test,
  };
}

/** Makes sure the plan's set is a bitmap or list the caller may keep. */
export async function evaluate(plan: Plan, N: number, budget: Budget): Promise<DocSet> {
  const set = await plan.set();
  if (set instanceof Bits || set.length <= listLimit(N)) return set;
  budget.charge(set.length);
  return toBits(set, N);
}
