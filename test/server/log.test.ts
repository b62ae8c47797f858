import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/server/log.ts';

/** A stream that keeps what is written to it, as text. */
function sink(): { stream: NodeJS.WritableStream; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the JSON log', () => {
  it('writes one line per request, each the JSON of its fields, the odd ones escaped, past the strings it keeps', async () => {
    const out = sink();
    const logger = jsonLogger(out.stream, sink().stream);
    const paths = ['/v1/query', '/a "quoted" \\ path', '/ünïcode/\u2028', ...Array.from({ length: 300 }, (_, i) => `/p${i}`)];
    for (const [i, path] of paths.entries()) {
      logger.request({ method: 'POST', path, operation: i % 2 ? 'device-510k.meta' : null, status: 200 + i, ms: i / 100, ...(i === 1 && { aborted: true as const }) });
    }
    // Held for the turn, then written.
    expect(out.text()).toBe('');
    await nextTurn();
    const lines = out.text().split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(paths.length);
    for (const [i, line] of lines.entries()) {
      const { time, ...rest } = JSON.parse(line) as Record<string, unknown>;
      expect(new Date(time as string).toISOString()).toBe(time);
      expect(rest).toEqual({
        level: 'info',
        msg: 'request',
        method: 'POST',
        path: paths[i],
        operation: i % 2 ? 'device-510k.meta' : null,
        status: 200 + i,
        ms: i / 100,
        ...(i === 1 && { aborted: true }),
      });
    }
  });

  it('writes an event after the request lines before it', async () => {
    const out = sink();
    const logger = jsonLogger(out.stream, sink().stream);
    logger.request({ method: 'GET', path: '/healthz', operation: null, status: 200, ms: 1 });
    logger.info('snapshot loaded', { snapshotId: 'abc' });
    const [first, second] = out.text().trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
    expect([first?.msg, second?.msg]).toEqual(['request', 'snapshot loaded']);
    await nextTurn();
    expect(out.text().trim().split('\n')).toHaveLength(2);
  });
});
