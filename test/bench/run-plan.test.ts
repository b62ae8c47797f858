import { describe, expect, it } from 'vitest';
import { runPlan } from '../../bench/lib/run-plan.ts';

/** What `npm run bench` measures, from its options: --quick stays lean so that it ends within its own limit. */
describe('runPlan', () => {
  it('--quick measures one round per figure and leaves out the all-cores and Worker sections and the PDFs', () => {
    expect(runPlan({ quick: true, cpus: 2 })).toEqual({
      allCores: false,
      worker: false,
      rounds: 1,
      seconds: 2,
      warmupSeconds: 1,
      pipeliningSeconds: 4,
      predicatePdfs: false,
      maxMinutes: 10,
    });
  });

  it('a full run measures every section, three rounds of 5 seconds, the all-cores section only with 2+ cores', () => {
    expect(runPlan({ quick: false, cpus: 2 })).toEqual({
      allCores: true,
      worker: true,
      rounds: 3,
      seconds: 5,
      warmupSeconds: 2,
      pipeliningSeconds: 8,
      predicatePdfs: true,
      maxMinutes: 90,
    });
    expect(runPlan({ quick: false, cpus: 1 }).allCores).toBe(false);
  });

  it('a section asked for by name runs with --quick too, and explicit figures win over the defaults', () => {
    const plan = runPlan({ quick: true, cpus: 2, allCores: 'yes', worker: 'yes', rounds: '3', seconds: '5', maxMinutes: '30' });
    expect([plan.allCores, plan.worker, plan.rounds, plan.seconds, plan.maxMinutes]).toEqual([true, true, 3, 5, 30]);
    expect(runPlan({ quick: false, cpus: 4, allCores: 'no', worker: 'no' })).toMatchObject({ allCores: false, worker: false });
  });

  it.each([
    [{ allCores: 'maybe' }, 'Expected `--all-cores` to be yes or no, got "maybe"'],
    [{ worker: '1' }, 'Expected `--worker` to be yes or no, got "1"'],
    [{ rounds: '0' }, 'Expected `--rounds` to be a number above 0, got "0"'],
    [{ seconds: 'x' }, 'Expected `--seconds` to be a number above 0, got "x"'],
  ])('refuses %j with a message naming the option', (bad, message) => {
    expect(() => runPlan({ quick: true, cpus: 2, ...bad })).toThrow(message);
  });
});
