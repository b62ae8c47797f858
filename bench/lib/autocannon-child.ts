/**
 * autocannon in its own process, drawing requests at random (seeded) from a list; prints the same JSON line as the
 * wrk script.
 *
 *   node --import tsx bench/lib/autocannon-child.ts URL REQUESTS.json CONNECTIONS SECONDS
 *   node --import tsx bench/lib/autocannon-child.ts --serve
 *
 * With --serve it runs one round per line of stdin (a JSON array of the four arguments) and prints one line per
 * round, until stdin closes: a bench starts it once, not once per round (its start, a TypeScript loader and
 * autocannon, takes seconds on a loaded 2-core machine, which a run of many short rounds paid again and again).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import type { LoadRequest } from './load.ts';
import { mulberry32 as random } from '../../test/helpers/random.ts';

/** One round: `connections` connections for `seconds`, requests drawn at random (seeded) from the list in `file`. */
async function round(url: string, file: string, connections: number, seconds: number) {
  const list = JSON.parse(readFileSync(file, 'utf8')) as LoadRequest[];
  const next = random(510);
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (req) => {
          const r = list[Math.floor(next() * list.length)]!;
          return r.body === undefined
            ? { ...req, method: r.method, path: r.path }
            : { ...req, method: r.method, path: r.path, body: r.body, headers: { ...r.headers, 'content-type': 'application/json' } };
        },
      },
    ],
  });
  return {
    requests: result.requests.total,
    durationUs: result.duration * 1e6,
    bytes: result.throughput.average * result.duration,
    failures: result.errors + result.timeouts + result.non2xx,
    // autocannon reports milliseconds
    p50Us: result.latency.p50 * 1000,
    p99Us: result.latency.p99 * 1000,
  };
}

if (process.argv[2] === '--serve') {
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const [url, file, connections, seconds] = JSON.parse(line) as [string, string, number, number];
    process.stdout.write(`${JSON.stringify(await round(url, file, connections, seconds))}\n`);
  }
} else {
  const [url, file, connections, seconds] = process.argv.slice(2);
  process.stdout.write(`${JSON.stringify(await round(url!, file!, Number(connections), Number(seconds)))}\n`);
}
