/**
 * The bound on an operation's run, for both hosts: an operation still running long after its time is a bug, and its
 * request answers 500 rather than hold its client forever. One message, one rule; how the time is watched differs.
 *
 * `shared`: one timer for every operation in flight, looking every tenth of the limit (Node, where thousands of
 * requests a second would each arm and clear a timer of their own). Without it, a timer per run (the Worker, whose
 * timers belong to the request that set them).
 */
export type Deadline = <T>(work: Promise<T>, operation: string) => Promise<T>;

export function operationDeadline(ms: number, shared: boolean): Deadline {
  return shared ? (work, operation) => swept(work, ms, operation) : (work, operation) => timed(work, ms, operation);
}

const late = (operation: string, ms: number) => new Error(`${operation} did not finish within ${ms} ms`);

function timed<T>(work: Promise<T>, ms: number, operation: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late(operation, ms)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

type Watched = { at: number; expire: () => void };
const watched = new Set<Watched>();
let sweeper: ReturnType<typeof setInterval> | null = null;
let sweepEveryMs = 1000;

function watch(entry: Watched, ms: number): void {
  watched.add(entry);
  const every = Math.max(10, Math.min(1000, Math.floor(ms / 10)));
  if (sweeper && every >= sweepEveryMs) return;
  if (sweeper) clearInterval(sweeper);
  sweepEveryMs = every;
  sweeper = setInterval(() => {
    const now = Date.now();
    for (const d of watched) if (d.at <= now) d.expire();
    if (watched.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
      sweepEveryMs = 1000;
    }
  }, every);
  // The sweep never keeps a process alive on its own.
  (sweeper as { unref?: () => void }).unref?.();
}

function swept<T>(work: Promise<T>, ms: number, operation: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry: Watched = {
      at: Date.now() + ms,
      expire: () => {
        watched.delete(entry);
        reject(late(operation, ms));
      },
    };
    watch(entry, ms);
    work.then(
      (value) => {
        watched.delete(entry);
        resolve(value);
      },
      (err: unknown) => {
        watched.delete(entry);
        reject(err);
      },
    );
  });
}
