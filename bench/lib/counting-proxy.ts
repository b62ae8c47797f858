import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Lighthouse's mobile network: one shared link of 1.6 Mbit/s with 150 ms of round trip. */
export const PHONE_LINK = { bytesPerMs: 1.6e6 / 8 / 1000, rttMs: 150 };

export const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
};

export type Sent = { at: number; bytes: number; url: string };

/**
 * A proxy that buffers each answer of `upstreamPort`, counts its bytes, and (when `link` is set) delivers it through
 * one shared link of the given bandwidth after half the round trip, like a phone's network would.
 */
export async function countingProxy(upstreamPort: number) {
  const sent: Sent[] = [];
  let link: { bytesPerMs: number; rttMs: number } | null = null;
  let linkFreeAt = 0;
  const proxy = await listen(
    createServer((req, res) => {
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
              res.writeHead(ures.statusCode ?? 502, headers);
              res.end(payload);
              sent.push({ at: Date.now(), bytes, url: req.url ?? '' });
            };
            if (!link) return deliver();
            const now = Date.now();
            const start = Math.max(now + link.rttMs / 2, linkFreeAt);
            linkFreeAt = start + bytes / link.bytesPerMs;
            setTimeout(deliver, linkFreeAt + link.rttMs / 2 - now);
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
    setLink(value: typeof link) {
      link = value;
      linkFreeAt = 0;
    },
    close: proxy.close,
  };
}

