/**
 * What a bench run measures and how long each figure's load lasts, from its options. `--quick` must end within its
 * own limit on a 2-core machine: one round per figure, and none of the sections that start the most processes for
 * the fewest new figures (a server and nginx per core; workerd beside Node and nginx), unless asked for by name.
 */
export type RunOptions = {
  quick: boolean;
  cpus: number;
  allCores?: string | undefined;
  worker?: string | undefined;
  rounds?: string | undefined;
  seconds?: string | undefined;
  maxMinutes?: string | undefined;
};

export type RunPlan = {
  allCores: boolean;
  worker: boolean;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  pipeliningSeconds: number;
  /** The predicates section also over the summaries as PDFs (the slow half). */
  predicatePdfs: boolean;
  maxMinutes: number;
};

const positive = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`Expected \`--${name}\` to be a number above 0, got "${raw}"`);
  return n;
};

const yesNo = (name: string, raw: string | undefined, otherwise: boolean): boolean => {
  if (raw === undefined) return otherwise;
  if (raw !== 'yes' && raw !== 'no') throw new Error(`Expected \`--${name}\` to be yes or no, got "${raw}"`);
  return raw === 'yes';
};

export function runPlan(o: RunOptions): RunPlan {
  return {
    allCores: yesNo('all-cores', o.allCores, !o.quick && o.cpus > 1),
    worker: yesNo('worker', o.worker, !o.quick),
    rounds: positive('rounds', o.rounds ?? (o.quick ? '1' : '3')),
    seconds: positive('seconds', o.seconds ?? (o.quick ? '2' : '5')),
    warmupSeconds: o.quick ? 1 : 2,
    pipeliningSeconds: o.quick ? 4 : 8,
    predicatePdfs: !o.quick,
    maxMinutes: positive('max-minutes', o.maxMinutes ?? (o.quick ? '10' : '90')),
  };
}
