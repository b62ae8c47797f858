/**
 * s3rver in a process of its own (s3-server.ts starts it): argv gives its folder and its one bucket. It sends its port
 * once it listens, then each key stored, in order; it answers `sync` after them, and closes when told.
 */
import type { EventEmitter } from 'node:events';
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2) as [string, string];
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
(server as unknown as EventEmitter).on('event', (e: { Records: { eventName: string; s3: { object: { key: string } } }[] }) => {
  for (const r of e.Records) if (r.eventName.startsWith('ObjectCreated')) process.send!({ created: decodeURIComponent(r.s3.object.key) });
});
const { port } = await server.run();
process.send!({ port });
process.on('message', async (m) => {
  if (m === 'sync') process.send!({ synced: true });
  if (m !== 'close') return;
  await server.close();
  process.disconnect();
});
