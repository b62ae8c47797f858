/**
 * Request work in short turns of the event loop, one request per connection in turn.
 *
 * libuv accepts one new connection per turn of the event loop. A turn that runs fifty searches back to back (each a
 * few milliseconds at a million records) keeps every new connection waiting for that whole turn, and the fiftieth
 * client of a burst waits for fifty such turns: seconds, although each answer takes milliseconds. So operations do
 * not run where their request was parsed: they queue here, and the queue is worked for at most `budgetMs` a turn,
 * after which the loop goes back to the network (accepting, reading, writing) before the next turn's work.
 *
 * The queue is per connection, served round robin: a connection with many requests in flight (pipelining, or a
 * client that sends faster than it reads) gets one answer per round like any other, so it cannot push a newcomer's
 * request behind all of its own.
 *
 * A request that has not started yet goes before the rest of a long job that paused (a search between its slices):
 * most requests take well under a slice, so a newcomer waits for the slice running now, not for a slice of every long
 * job in the queue (sixteen searches counting every facet made a `meta` wait sixteen slices). Long jobs still move on
 * in every turn: a turn whose budget was spent on new requests alone runs one paused job's next slice before it ends.
 */
export type Turns = {
  /**
   * Runs `job` when its connection's turn comes, and settles as the job does. A long job (a search in slices) awaits
   * `pause()` between its slices: the rest of it becomes its connection's next request, so every other connection's
   * request waiting now is served before it goes on, and the loop gets back to the network once the turn's budget is
   * spent. A job that never pauses keeps the queue until it settles.
   */
  run<T>(owner: object, job: (pause: Pause) => Promise<T>): Promise<T>;
  /** Requests waiting for their turn, paused jobs included (for tests and the health of the queue). */
  readonly waiting: number;
};

/** Gives up the job's turn; resolves when its turn comes again. */
export type Pause = () => Promise<void>;

/** One step of a job: resolves when the job settles or pauses. `resumed`: the rest of a paused job, not its start. */
type Step = { run: () => Promise<void>; resumed: boolean };

export function createTurns(
  budgetMs: number,
  schedule: (drain: () => void) => void = setImmediate,
  now: () => number = () => performance.now(),
  /**
   * A job that pauses before it has run this long in its turn goes on at once: giving up a turn costs a round of the
   * queue, which only a long job should pay (tests give 0: every pause gives the turn up).
   */
  sliceMs: number = budgetMs,
): Turns {
  if (!(budgetMs > 0)) throw new Error(`Expected \`turnBudgetMs\` to be a number above 0, got ${budgetMs}`);
  // Insertion order is the round: a connection served and still waiting is moved to the end.
  const queues = new Map<object, Step[]>();
  let waiting = 0;
  // Connections whose next step is a paused job's rest (it always goes first in its connection's queue).
  let resumedWaiting = 0;
  let scheduled = false;
  // When the step running now began (one step runs at a time).
  let stepStarted = 0;

  /** The next connection to serve: the first in the round whose next step is a start, else the first in the round. */
  const next = (resumedOnly: boolean): [object, Step[]] => {
    const first = queues.entries().next().value as [object, Step[]];
    if (resumedOnly) {
      for (const entry of queues) if (entry[1][0]!.resumed) return entry;
    } else if (resumedWaiting < queues.size) {
      for (const entry of queues) if (!entry[1][0]!.resumed) return entry;
    }
    return first;
  };

  const drain = async (): Promise<void> => {
    const ends = now() + budgetMs;
    let resumedInTurn = false;
    while (queues.size > 0) {
      const spent = now() >= ends;
      // Past the budget, a turn that served only new requests still moves one paused job on.
      if (spent && (resumedInTurn || resumedWaiting === 0)) break;
      const [owner, queue] = next(spent);
      const step = queue.shift()!;
      queues.delete(owner);
      if (queue.length > 0) queues.set(owner, queue);
      waiting--;
      if (step.resumed) {
        resumedWaiting--;
        resumedInTurn = true;
      }
      stepStarted = now();
      await step.run();
      if (spent) break;
    }
    scheduled = false;
    if (queues.size > 0) later();
  };
  const later = () => {
    scheduled = true;
    schedule(() => void drain());
  };
  /** `first`: the rest of a paused job, which goes before its connection's later requests (answered in order). */
  const enqueue = (owner: object, step: Step) => {
    const queue = queues.get(owner);
    if (!queue) queues.set(owner, [step]);
    else if (step.resumed) queue.unshift(step);
    else queue.push(step);
    waiting++;
    if (step.resumed) resumedWaiting++;
    if (!scheduled) later();
  };

  return {
    run<T>(owner: object, job: (pause: Pause) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        // Ends the step running now: the drain goes on to the next request.
        let stepDone = () => {};
        const pause: Pause = () =>
          now() - stepStarted < sliceMs
            ? Promise.resolve()
            : new Promise<void>((resume) => {
            const done = stepDone;
            enqueue(owner, { run: () => new Promise<void>((next) => ((stepDone = next), resume())), resumed: true });
            done();
          });
        // Never rejects: a failed job settles its own request and the queue goes on.
        const start: Step = {
          run: () =>
            new Promise<void>((next) => {
              stepDone = next;
              new Promise<T>((settle) => settle(job(pause))).then(resolve, reject).finally(() => stepDone());
            }),
          resumed: false,
        };
        enqueue(owner, start);
      });
    },
    get waiting() {
      return waiting;
    },
  };
}
