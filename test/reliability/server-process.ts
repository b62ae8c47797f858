import { createApp } from '../../src/server/app.ts';
import { silentLogger } from '../../src/server/log.ts';

/**
 * The server in a process of its own, for figures that must not include the test's own allocations: started with
 * `--expose-gc`, it reports its heap after a full collection whenever the parent asks. Options arrive as JSON in argv.
 */
type Message = { type: 'memory' } | { type: 'close' };

const options = JSON.parse(process.argv[2] ?? '{}') as Parameters<typeof createApp>[0];
const app = await createApp({ syncStatePath: null, publicDir: null, watch: false, pollMs: 0, logger: silentLogger, ...options });
const { port } = await app.listen(0, '127.0.0.1');
const gc = (globalThis as { gc?: () => void }).gc;
process.send?.({ type: 'listening', port });
process.on('message', (m: Message) => {
  if (m.type === 'memory') {
    gc?.();
    gc?.();
    const { heapUsed, rss } = process.memoryUsage();
    process.send?.({ type: 'memory', heapUsed, rss, gc: gc !== undefined });
  } else if (m.type === 'close') {
    void app.close({ graceMs: 1000 }).then(() => process.exit(0));
  }
});
