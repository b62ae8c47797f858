import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** A local S3-compatible server (s3rver) on a loopback port with one bucket, and the keys stored, in their order. */
export type S3Server = {
  port: number;
  /** The keys stored, in order, as far as the server has told: `sync` first to have every key stored before it. */
  created: string[];
  /** Resolves once every key the server stored before this call is in `created`. */
  sync(): Promise<void>;
  close(): Promise<void>;
};

/**
 * Starts s3rver in its own process. A listing of more than 1,000 keys is paged with continuation tokens that s3rver
 * enciphers with DES, which OpenSSL 3 offers only under its legacy provider: that process runs with it, while the
 * tests and the code under test keep Node's default.
 */
export async function startS3(directory: string, bucket: string): Promise<S3Server> {
  const child = fork(fileURLToPath(new URL('./s3-server-process.ts', import.meta.url)), [directory, bucket], {
    execArgv: ['--openssl-legacy-provider', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const created: string[] = [];
  const waiting: (() => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.on('message', (m: { port?: number; created?: string; synced?: true }) => {
      if (m.port !== undefined) resolve(m.port);
      if (m.created !== undefined) created.push(m.created);
      if (m.synced) waiting.shift()?.();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the S3 server exited with ${code} before listening`)));
  });
  return {
    port,
    created,
    // Messages arrive in the order sent: the answer to this one comes after every key stored before it.
    sync: () =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        child.send('sync');
      }),
    async close() {
      if (child.exitCode !== null) return;
      child.send('close');
      await once(child, 'exit');
    },
  };
}
