import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

/**
 * Child processes for the benchmark: every part runs in its own process (so its memory is its own and the load
 * generator never shares a thread with what it measures), each with a deadline, and each is stopped by its pid.
 */

/** Node with tsx loaded in-process, so the child's pid is the process that runs the code (`npx tsx` would fork). */
export const TSX_NODE = [process.execPath, '--import', 'tsx'] as const;

const children = new Set<ChildProcess>();

/** Starts `node --import tsx script args…`; it is killed when the benchmark exits, whatever happens. */
export function startTsx(
  script: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions; nodeArgs?: readonly string[]; cwd?: string } = {},
): ChildProcess {
  return track(spawn(TSX_NODE[0], [...TSX_NODE.slice(1), ...(options.nodeArgs ?? []), script, ...args], {
    env: options.env ?? process.env,
    stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  }));
}

/** A JavaScript file under plain node (no TypeScript loader), tracked like `startTsx`'s children. */
export function startNode(
  script: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions; nodeArgs?: readonly string[] } = {},
): ChildProcess {
  return track(spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], { env: options.env ?? process.env, stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'] }));
}

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Kills every child still running (on exit, on Ctrl-C, on a deadline). */
export function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Asks a child to stop (SIGTERM), and kills it when it has not stopped after `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Runs a child to its end and returns its stdout; rejects on a non-zero exit or when `timeoutMs` passes. */
export function runToEnd(child: ChildProcess, timeoutMs: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not finish within ${Math.round(timeoutMs / 1000)} s; it was stopped`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${what} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

/** The last line of a child's stdout, as JSON: how the benchmark's children hand back their figures. */
export function lastJsonLine<T>(stdout: string): T {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null') as T;
}

/**
 * A child that answers JSON requests, one line each, in order: the search engines stay loaded between rounds, so
 * rounds of the two engines can alternate and share whatever noise the machine has at that moment.
 */
export class LineChild {
  private readonly waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | null = null;

  constructor(readonly child: ChildProcess, readonly name: string) {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      this.waiting.shift()?.resolve(JSON.parse(line));
    });
    child.once('exit', (code, signal) => {
      this.failure = new Error(`${name} stopped (${signal ?? `exit code ${code}`})`);
      for (const w of this.waiting.splice(0)) w.reject(this.failure);
    });
  }

  request<T>(message: unknown, timeoutMs: number): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`${this.name} did not answer within ${Math.round(timeoutMs / 1000)} s; it was stopped`));
      }, timeoutMs);
      this.waiting.push({
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.stdin!.write(`${JSON.stringify(message)}\n`);
    });
  }
}

/** The child side of LineChild: answers each request line with `handle`'s JSON. */
export function serveLines(handle: (message: unknown) => Promise<unknown> | unknown): void {
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      const answer = await handle(JSON.parse(line));
      process.stdout.write(`${JSON.stringify(answer)}\n`);
    });
  });
  lines.on('close', () => void queue.then(() => process.exit(0)));
}

/** A free TCP port on 127.0.0.1 (the kernel picks it; it is free when this resolves). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Waits until `url` answers `status`, polling; rejects after `timeoutMs` or when `alive()` turns false. */
export async function waitForHttp(url: string, status: number, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`the process behind ${url} stopped before it answered`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === status) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer ${status} within ${Math.round(timeoutMs / 1000)} s (${last})`);
}

/** Resident memory of a process now and at its peak (VmRSS and VmHWM from /proc), in bytes; null when gone. */
export function memoryOf(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * A process's main thread as the Linux scheduler counts it (/proc/PID/task/PID/schedstat): milliseconds it has run on
 * a core, and milliseconds it has waited, runnable, for one. Read before and after a request, the difference says
 * whether the request waited for the server's own work (run) or for a core the machine's other work held (waited);
 * null where there is no such file (not Linux, or the process is gone).
 */
export function mainThreadTimes(pid: number): { runMs: number; waitMs: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { runMs: run! / 1e6, waitMs: wait! / 1e6 } : null;
  } catch {
    return null;
  }
}

/**
 * Milliseconds a process has run on a core, all its threads together (the schedstat file of each of /proc/PID/task): read before and
 * after a load, the difference over the answers is what each answer cost the process in CPU, whatever else the
 * machine ran meanwhile; null where there is no such file.
 */
export function processRunMs(pid: number): number | null {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** Samples a process's resident memory every `everyMs` until stopped; returns the highest figure seen. */
export function sampleMemory(pid: number, everyMs = 100): { stop: () => number } {
  let max = memoryOf(pid)?.rss ?? 0;
  const timer = setInterval(() => {
    const m = memoryOf(pid);
    if (m) max = Math.max(max, m.rss);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      const m = memoryOf(pid);
      return m ? Math.max(max, m.rss) : max;
    },
  };
}
