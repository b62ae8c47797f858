import { describe, expect, it } from 'vitest';
import { createTurns } from '../../src/server/turns.ts';

/** A scheduler the test turns by hand: each call of `turn()` is one turn of the event loop. */
function manual() {
  const pending: (() => void)[] = [];
  return {
    schedule: (drain: () => void) => void pending.push(drain),
    turns: () => pending.length,
    async turn() {
      const drain = pending.shift();
      if (!drain) throw new Error('no turn was scheduled');
      drain();
      // Let the drain's awaits (jobs are promises) run to the end of this turn.
      for (let i = 0; i < 50; i++) await Promise.resolve();
    },
  };
}


describe('turns', () => {
  it('serves connections round robin, one request each per round', async () => {
    const loop = manual();
    const turns = createTurns(1000, loop.schedule);
    const a = {};
    const b = {};
    const order: string[] = [];
    const job = (name: string) => () => Promise.resolve(void order.push(name));
    const done = [turns.run(a, job('a1')), turns.run(a, job('a2')), turns.run(a, job('a3')), turns.run(b, job('b1')), turns.run(b, job('b2'))];
    expect(turns.waiting).toBe(5);
    await loop.turn();
    await Promise.all(done);
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    expect(turns.waiting).toBe(0);
  });

  it('gives the loop back once a turn has used its budget, and goes on in the next turn', async () => {
    const loop = manual();
    let clock = 0;
    const turns = createTurns(5, loop.schedule, () => clock);
    let ran = 0;
    const jobs = Array.from({ length: 6 }, (_, i) => turns.run({ i }, async () => ((clock += 3), ran++)));
    await loop.turn();
    // 3 ms each against a 5 ms budget: the second job passes it, so the turn ends after two.
    expect(ran).toBe(2);
    expect(loop.turns()).toBe(1);
    await loop.turn();
    await loop.turn();
    await Promise.all(jobs);
    expect(ran).toBe(6);
    expect(loop.turns()).toBe(0);
  });

  it('settles each request as its own job does; a failing job does not stop the queue', async () => {
    const loop = manual();
    const turns = createTurns(1000, loop.schedule);
    const owner = {};
    const failing = turns.run(owner, async () => {
      throw new Error('boom');
    });
    const thrown = turns.run(owner, () => {
      throw new Error('thrown before any promise');
    });
    const fine = turns.run(owner, async () => 42);
    await loop.turn();
    await expect(failing).rejects.toThrow('boom');
    await expect(thrown).rejects.toThrow('thrown before any promise');
    await expect(fine).resolves.toBe(42);
  });

  it('serves a request that arrives while a long job runs between the slices of that job, not after all of it', async () => {
    const loop = manual();
    let clock = 0;
    // A slice takes 1 ms on this clock: a turn runs three of them.
    const turns = createTurns(3, loop.schedule, () => clock, 0);
    const events: string[] = [];
    let slices = 0;
    let arrive: () => void = () => {};
    const arrived = new Promise<void>((r) => (arrive = r));
    const long = turns.run({}, async (pause) => {
      for (let i = 0; i < 200; i++) {
        slices++;
        clock++;
        if (i === 5) arrive();
        await pause();
      }
      events.push('long done');
    });
    const meta = arrived.then(() => turns.run({}, async () => void events.push(`meta done after ${slices} slices`)));
    for (let i = 0; i < 500 && loop.turns() > 0; i++) await loop.turn();
    expect(events).toHaveLength(2);
    expect(events[0]).toMatch(/^meta done after \d+ slices$/);
    expect(events[1]).toBe('long done');
    expect(Number(events[0]!.split(' ')[3])).toBeLessThan(10);
    await Promise.all([long, meta]);
  });

  it("goes on with a paused job before its own connection's later requests, and gives the loop back at the budget", async () => {
    const loop = manual();
    let clock = 0;
    const turns = createTurns(5, loop.schedule, () => clock, 0);
    const owner = {};
    const order: string[] = [];
    const long = turns.run(owner, async (pause) => {
      for (let i = 0; i < 4; i++) {
        order.push(`slice ${i}`);
        clock += 2;
        await pause();
      }
      order.push('long done');
    });
    const next = turns.run(owner, async () => void order.push('next'));
    await loop.turn();
    // 2 ms a slice against a 5 ms budget: the turn ends after the third slice.
    expect(order).toEqual(['slice 0', 'slice 1', 'slice 2']);
    expect(loop.turns()).toBe(1);
    await loop.turn();
    await Promise.all([long, next]);
    expect(order).toEqual(['slice 0', 'slice 1', 'slice 2', 'slice 3', 'long done', 'next']);
  });

  it('lets a job that pauses early in its turn go on without giving the turn up', async () => {
    const loop = manual();
    let clock = 0;
    const turns = createTurns(5, loop.schedule, () => clock, 2);
    const order: string[] = [];
    const long = turns.run({}, async (pause) => {
      order.push('a');
      await pause(); // 0 ms into its turn: goes on
      order.push('b');
      clock += 2;
      await pause(); // 2 ms: gives the turn up
      order.push('c');
    });
    const other = turns.run({}, async () => void order.push('other'));
    await loop.turn();
    await Promise.all([long, other]);
    expect(order).toEqual(['a', 'b', 'other', 'c']);
  });

  it('serves a newcomer after the slice running now, not after a slice of every paused job', async () => {
    const loop = manual();
    let clock = 0;
    // A slice takes 1 ms on this clock and a turn's budget is 3 ms; every pause gives the turn up.
    const turns = createTurns(3, loop.schedule, () => clock, 0);
    let slices = 0;
    let started = 0;
    const longs = Array.from({ length: 16 }, () =>
      turns.run({}, async (pause) => {
        started++;
        for (let i = 0; i < 20; i++) {
          slices++;
          clock++;
          await pause();
        }
      }),
    );
    // Every long job has started and paused.
    for (let i = 0; i < 20 && started < 16; i++) await loop.turn();
    expect(started).toBe(16);
    const before = slices;
    let after = -1;
    const meta = turns.run({}, async () => void (after = slices));
    for (let i = 0; i < 500 && loop.turns() > 0 && after < 0; i++) await loop.turn();
    // At most the slice of the turn it arrived in: not sixteen, one for each paused job ahead of it in the round.
    expect(after - before).toBeLessThanOrEqual(1);
    for (let i = 0; i < 1000 && loop.turns() > 0; i++) await loop.turn();
    await Promise.all([...longs, meta]);
    expect(slices).toBe(16 * 20);
  });

  it('moves a paused job on in every turn, even while new requests fill each turn', async () => {
    const loop = manual();
    let clock = 0;
    const turns = createTurns(5, loop.schedule, () => clock, 0);
    let slices = 0;
    const long = turns.run({}, async (pause) => {
      for (let i = 0; i < 100; i++) {
        slices++;
        clock++;
        await pause();
      }
    });
    await loop.turn();
    const fresh: Promise<void>[] = [];
    for (let t = 0; t < 10; t++) {
      // Each turn, new requests whose work alone passes the budget.
      for (let k = 0; k < 3; k++) fresh.push(turns.run({}, async () => void (clock += 3)));
      const was = slices;
      await loop.turn();
      expect(slices).toBe(was + 1);
    }
    for (let i = 0; i < 100 && loop.turns() > 0; i++) await loop.turn();
    await Promise.all([long, ...fresh]);
  });

  it('refuses a budget that is not above 0', () => {
    expect(() => createTurns(0)).toThrow(/turnBudgetMs/);
  });
});
