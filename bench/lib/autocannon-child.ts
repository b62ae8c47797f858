/**
 * autocannon in its own process, drawing requests at random (seeded) from a list; prints the same JSON line as the
 * wrk script.
 *
 *   node --import tsx bench/lib/autocannon-child.ts URL REQUESTS.json CONNECTIONS SECONDS
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadRequest } from './load.ts';
import { mulberry32 as random } from '../../test/helpers/random.ts';

const [url, file, connections, seconds] = process.argv.slice(2);
const list = JSON.parse(readFileSync(file!, 'utf8')) as LoadRequest[];
const next = random(510);
const result = await autocannon({
  url: url!,
  connections: Number(connections),
  duration: Number(seconds),
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
const raw = {
  requests: result.requests.total,
  durationUs: result.duration * 1e6,
  bytes: result.throughput.average * result.duration,
  failures: result.errors + result.timeouts + result.non2xx,
  // autocannon reports milliseconds
  p50Us: result.latency.p50 * 1000,
  p99Us: result.latency.p99 * 1000,
};
process.stdout.write(`${JSON.stringify(raw)}\n`);
