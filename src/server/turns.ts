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
 */
export type Turns = {
  /** Runs `job` when its connection's turn comes, and settles as the job does. */
  run<T>(owner: object, job: () => Promise<T>): Promise<T>;
  /** Requests waiting for their turn (for tests and the health of the queue). */
  readonly waiting: number;
};

type Job = () => Promise<void>;

export function createTurns(
  budgetMs: number,
  schedule: (drain: () => void) => void = setImmediate,
  now: () => number = () => performance.now(),
): Turns {
  if (!(budgetMs > 0)) throw new Error(`Expected \`turnBudgetMs\` to be a number above 0, got ${budgetMs}`);
  // Insertion order is the round: a connection served and still waiting is moved to the end.
  const queues = new Map<object, Job[]>();
  let waiting = 0;
  let scheduled = false;

  const drain = async (): Promise<void> => {
    const ends = now() + budgetMs;
    while (queues.size > 0) {
      const [owner, queue] = queues.entries().next().value as [object, Job[]];
      const job = queue.shift()!;
      queues.delete(owner);
      if (queue.length > 0) queues.set(owner, queue);
      waiting--;
      await job();
      if (now() >= ends) break;
    }
    scheduled = false;
    if (queues.size > 0) later();
  };
  const later = () => {
    scheduled = true;
    schedule(() => void drain());
  };

  return {
    run<T>(owner: object, job: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const queue = queues.get(owner);
        // Never rejects: a failed job settles its own request and the queue goes on.
        const wrapped: Job = async () => {
          try {
            resolve(await job());
          } catch (err) {
            reject(err);
          }
        };
        if (queue) queue.push(wrapped);
        else queues.set(owner, [wrapped]);
        waiting++;
        if (!scheduled) later();
      });
    },
    get waiting() {
      return waiting;
    },
  };
}
