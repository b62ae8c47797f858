import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';

export const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

/**
 * A plain static host, like a CDN: the page's files at `/`, a snapshot folder at `/snapshot/`, GET and HEAD only.
 * A POST (the page's API probe) gets 405, as from most static hosts, and the page falls back to static mode.
 */
export async function startStaticHost(snapshotDir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const page = sirv(PUBLIC_DIR, { dev: true });
  const snapshot = sirv(snapshotDir, { dev: true });
  const notFound = (res: import('node:http').ServerResponse) => {
    res.statusCode = 404;
    res.end('Not found');
  };
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' });
      return res.end();
    }
    if (req.url?.startsWith('/snapshot/')) {
      req.url = req.url.slice('/snapshot'.length);
      return snapshot(req, res, () => notFound(res));
    }
    return page(req, res, () => notFound(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
