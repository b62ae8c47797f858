import { access, constants, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { lastJsonLine, runToEnd, startTsx, track } from './procs.ts';

/**
 * The load generator, always in its own process (autocannon's one process kept for every round of a run): wrk when it is installed (C, one thread: it needs a fraction of the
 * CPU autocannon needs for the same rate, which matters when nginx is the thing being measured), autocannon otherwise.
 * Each request is drawn at random (seeded) from a list, so lookups spread over the snapshot instead of hitting one
 * file. Random, not in turn: a cycle through more files than a cache holds would defeat any LRU cache on purpose,
 * which no real traffic does.
 */
/** `headers`: sent besides Content-Type (an MCP POST's Accept, say). */
export type LoadRequest = { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };
export type Generator = { name: 'wrk' | 'autocannon'; binary: string };

export type LoadResult = {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Connection errors, timeouts and answers that were not 2xx: each one makes the round suspect. */
  failures: number;
  bytesPerResponse: number;
};

export const WRK_MISSING = 'wrk was not found; autocannon generates the load instead. It is slower than nginx at small files, so the nginx column is capped by the generator; install wrk (Debian/Ubuntu: `sudo apt-get install -y wrk`) for the real limit.';

export async function findGenerator(prefer: 'wrk' | 'autocannon' | 'auto', root: string): Promise<{ generator: Generator; note: string | null }> {
  const autocannon: Generator = { name: 'autocannon', binary: join(root, 'bench/lib/autocannon-child.ts') };
  if (prefer === 'autocannon') return { generator: autocannon, note: null };
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, 'wrk');
    if (await access(path, constants.X_OK).then(() => true, () => false)) return { generator: { name: 'wrk', binary: path }, note: null };
  }
  return { generator: autocannon, note: WRK_MISSING };
}

/** A Lua long string that cannot be closed by the text inside it. */
function luaString(text: string): string {
  let eq = '';
  while (text.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${text}]${eq}]`;
}

/** The wrk script: the requests, formatted once per thread, drawn at random; the figures printed as one JSON line. */
export function wrkScript(requests: readonly LoadRequest[]): string {
  const headersOf = (r: LoadRequest) => `{ ${Object.entries(r.headers ?? {}).map(([k, v]) => `[ ${luaString(k)} ] = ${luaString(v)}`).join(', ')} }`;
  const items = requests.map((r) =>
    r.body === undefined
      ? `{ ${luaString(r.method)}, ${luaString(r.path)}, nil, ${headersOf(r)} }`
      : `{ ${luaString(r.method)}, ${luaString(r.path)}, ${luaString(r.body)}, ${headersOf(r)} }`,
  );
  return `local items = {
${items.join(',\n')}
}
local formatted = {}
init = function(args)
  math.randomseed(510)
  for i, it in ipairs(items) do
    local headers = {}
    for k, v in pairs(it[4]) do headers[k] = v end
    if it[3] ~= nil then headers["Content-Type"] = "application/json" end
    formatted[i] = wrk.format(it[1], it[2], headers, it[3])
  end
end
request = function()
  return formatted[math.random(#formatted)]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"bytes":%d,"failures":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

type RawFigures = { requests: number; durationUs: number; bytes: number; failures: number; p50Us: number; p99Us: number };

function figures(raw: RawFigures): LoadResult {
  return {
    rps: raw.requests / (raw.durationUs / 1e6),
    p50Ms: raw.p50Us / 1000,
    p99Ms: raw.p99Us / 1000,
    requests: raw.requests,
    failures: raw.failures,
    bytesPerResponse: raw.requests > 0 ? raw.bytes / raw.requests : 0,
  };
}

/** One bounded round of load: `connections` connections for `seconds`, cycling through `requests`. */
export async function runLoad(
  generator: Generator,
  url: string,
  requests: readonly LoadRequest[],
  options: { connections: number; seconds: number; tmp: string; tag: string },
): Promise<LoadResult> {
  const deadline = (options.seconds + 30) * 1000;
  if (generator.name === 'wrk') {
    const script = join(options.tmp, `${options.tag}.lua`);
    await writeFile(script, wrkScript(requests));
    const child = track(
      spawn(generator.binary, ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s', '-s', script, url], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    return figures(lastJsonLine<RawFigures>(await runToEnd(child, deadline, 'wrk')));
  }
  const list = join(options.tmp, `${options.tag}.json`);
  await writeFile(list, JSON.stringify(requests));
  return figures(await cannonFor(generator.binary).round([url, list, options.connections, options.seconds], deadline));
}

/**
 * One autocannon process per run (per script), started on its first round and kept: its start (a TypeScript loader
 * and autocannon) takes seconds on a loaded 2-core machine, and `--quick` has dozens of 2-second rounds. Rounds run
 * one at a time; between them the process holds nothing open and does not keep the bench alive (it exits when the
 * bench does, as its stdin closes). A round past its deadline, or a process that dies, ends it; the next round starts
 * another.
 */
/** The id of the autocannon process kept for `binary`'s rounds, or null while none runs. */
export const keptAutocannonPid = (binary: string): number | null => cannons.get(binary)?.child.pid ?? null;

type Cannon = { child: ChildProcess; round: (args: [string, string, number, number], deadlineMs: number) => Promise<RawFigures> };
const cannons = new Map<string, Cannon>();

function cannonFor(binary: string): Cannon {
  const running = cannons.get(binary);
  if (running && running.child.exitCode === null && running.child.signalCode === null) return running;
  const child = startTsx(binary, ['--serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const hold = (on: boolean) => {
    for (const h of [child, child.stdin, child.stdout] as ({ ref(): void; unref(): void } | null)[]) on ? h?.ref() : h?.unref();
  };
  let buffer = '';
  let waiting: { resolve: (f: RawFigures) => void; reject: (e: Error) => void } | null = null;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      const w = waiting;
      waiting = null;
      w?.resolve(JSON.parse(line) as RawFigures);
    }
  });
  child.on('exit', (code, signal) => {
    cannons.delete(binary);
    waiting?.reject(new Error(`autocannon exited (${signal ?? `code ${code}`}) during a round`));
    waiting = null;
  });
  hold(false);
  const cannon: Cannon = {
    child,
    round: (args, deadlineMs) =>
      new Promise<RawFigures>((resolve, reject) => {
        if (waiting) return reject(new Error('autocannon is running another round'));
        hold(true);
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`autocannon did not finish a round within ${deadlineMs / 1000} s`));
        }, deadlineMs);
        waiting = {
          resolve: (f) => (clearTimeout(timer), hold(false), resolve(f)),
          reject: (e) => (clearTimeout(timer), hold(false), reject(e)),
        };
        child.stdin!.write(`${JSON.stringify(args)}\n`);
      }),
  };
  cannons.set(binary, cannon);
  return cannon;
}
