import { createHash } from 'node:crypto';

/**
 * The sha256 of bytes as lower-case hex, by Node's crypto (the build and the Node server; a Worker checks files with
 * its storage's own digest, src/worker/storage.ts).
 */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
