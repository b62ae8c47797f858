import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';

/** Lighthouse's mobile network: one shared link of 1.6 Mbit/s with 150 ms of round trip. */
export const PHONE_LINK = { bytesPerMs: 1.6e6 / 8 / 1000, rttMs: 150 };

/** The rest of the phone profile, on the page before it loads: the main thread slowed 4x and a phone's screen. */
export async function emulatePhone(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  await page.setViewportSize({ width: 390, height: 844 });
}

export const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
};

/** One answer delivered to the browser: when it was asked for and delivered (ms since the epoch), and its bytes. */
export type Sent = { askedAt: number; at: number; bytes: number; url: string };

/**
 * A proxy that buffers each answer of `upstreamPort`, counts its bytes, and (when `link` is set) delivers it through
 * one shared link of the given bandwidth after half the round trip, like a phone's network would.
 *
 * `startRun` begins a measurement: answers to requests of an earlier run (a browser closed while its last requests
 * were still upstream or waiting for the link) are dropped, never delivered, never counted as the new run's. They are
 * listed in `stale`, so a run can say how many there were.
 */
export async function countingProxy(upstreamPort: number) {
  const sent: Sent[] = [];
  const stale: Sent[] = [];
  let link: { bytesPerMs: number; rttMs: number } | null = null;
  let linkFreeAt = 0;
  let run = 0;
  const waiting = new Map<ServerResponse, { timer: ReturnType<typeof setTimeout>; owed: Sent }>();
  const proxy = await listen(
    createServer((req, res) => {
      const asked = run;
      const askedAt = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const up = httpRequest({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers }, (ures) => {
          const body: Buffer[] = [];
          ures.on('data', (c: Buffer) => body.push(c));
          ures.on('end', () => {
            const payload = Buffer.concat(body);
            const headers = { ...ures.headers };
            delete headers['transfer-encoding'];
            headers['content-length'] = String(payload.byteLength);
            const head = `HTTP/1.1 ${ures.statusCode} \r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
            const bytes = Buffer.byteLength(head) + payload.byteLength;
            const deliver = () => {
              waiting.delete(res);
              if (asked !== run) {
                stale.push({ askedAt, at: Date.now(), bytes, url: req.url ?? '' });
                return void res.destroy();
              }
              res.writeHead(ures.statusCode ?? 502, headers);
              res.end(payload);
              sent.push({ askedAt, at: Date.now(), bytes, url: req.url ?? '' });
            };
            if (!link || asked !== run) return deliver();
            const now = Date.now();
            const start = Math.max(now + link.rttMs / 2, linkFreeAt);
            linkFreeAt = start + bytes / link.bytesPerMs;
            waiting.set(res, { timer: setTimeout(deliver, linkFreeAt + link.rttMs / 2 - now), owed: { askedAt, at: NaN, bytes, url: req.url ?? '' } });
          });
        });
        up.on('error', () => res.writeHead(502).end());
        up.end(Buffer.concat(chunks));
      });
    }),
  );
  return {
    url: `http://127.0.0.1:${proxy.port}/`,
    sent,
    stale,
    /** Answers received from upstream and waiting for the link. */
    get owed() {
      return waiting.size;
    },
    /**
     * Begins a run over `value` (null: no pacing): an empty count, a free link, and every answer still owed to an
     * earlier run dropped.
     */
    startRun(value: typeof link) {
      run++;
      sent.length = 0;
      stale.length = 0;
      for (const [res, { timer, owed }] of waiting) {
        clearTimeout(timer);
        res.destroy();
        stale.push({ ...owed, at: Date.now() });
      }
      waiting.clear();
      link = value;
      linkFreeAt = 0;
    },
    close: proxy.close,
  };
}
