import type { ServerResponse } from 'node:http';

/**
 * A streamed answer on Node (GET /v1/export), with back-pressure: a slow reader holds one chunk, never the set.
 * Chunks may be lent (src/operations/export.ts): the next reuses the memory of the one before, so each is handed to
 * the kernel (the write's callback) before the next is asked for. A HEAD gets the headers only. An error thrown
 * before the first chunk is the caller's to answer; after it the headers are out, and the caller cuts the connection.
 */
export async function sendStream(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  chunks: AsyncIterable<Uint8Array>,
  head: boolean,
): Promise<void> {
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    let next = head ? null : await iterator.next();
    res.writeHead(status, headers);
    if (next === null) {
      res.end();
      return;
    }
    const closed = new Promise((resolve) => res.once('close', resolve));
    while (!next.done) {
      if (res.destroyed) return;
      const chunk = next.value;
      await Promise.race([new Promise((resolve) => res.write(chunk, resolve)), closed]);
      next = await iterator.next();
    }
    res.end();
  } finally {
    await iterator.return?.();
  }
}
