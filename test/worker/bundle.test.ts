import { describe, expect, it } from 'vitest';
import { bundleWorker } from '../../build/worker/bundle.ts';
import { MAX_COMPRESSED_BYTES, NODE_IMPORT } from '../helpers/worker-bundle.ts';

describe('the Worker bundle', () => {
  it('imports nothing, names no Node module, and is under 3 MB compressed', async () => {
    const bundle = await bundleWorker();
    expect(bundle.imports).toEqual([]);
    expect(bundle.code).not.toMatch(NODE_IMPORT);
    expect(bundle.gzipBytes).toBeGreaterThan(10_000);
    expect(bundle.gzipBytes).toBeLessThan(MAX_COMPRESSED_BYTES);
  });

  it('the pattern finds a Node import when there is one', () => {
    expect(`import { readFile } from "node:fs/promises";`).toMatch(NODE_IMPORT);
    expect(`const z = require('node:zlib')`).toMatch(NODE_IMPORT);
    expect(`await import("node:crypto")`).toMatch(NODE_IMPORT);
  });
  // `wrangler deploy --dry-run` runs in a fresh copy of the repository: test/worker/deploy.test.ts.
});
