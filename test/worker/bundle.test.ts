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

  it('loads the MCP SDK and its JSON Schema validator on the first MCP request, not when the isolate starts', async () => {
    const bundle = await bundleWorker();
    const sdk = (path: string) => /^node_modules\/(@modelcontextprotocol\/sdk|ajv)\//.test(path);
    // In the bundle (the /mcp route answers from it), reached only through import(): none is evaluated at start.
    expect(bundle.inputs.filter(sdk).length).toBeGreaterThan(10);
    expect(bundle.eager.filter(sdk)).toEqual([]);
    // The walk itself: the entry and what it imports statically (the dispatcher, the search engine) are eager.
    expect(bundle.eager).toEqual(expect.arrayContaining(['src/worker/index.ts', 'src/api/routes.ts', 'src/search/chunked.ts']));
    expect(bundle.eager).not.toContain('src/api/mcp/http.ts');
  });

  it('the pattern finds a Node import when there is one', () => {
    expect(`import { readFile } from "node:fs/promises";`).toMatch(NODE_IMPORT);
    expect(`const z = require('node:zlib')`).toMatch(NODE_IMPORT);
    expect(`await import("node:crypto")`).toMatch(NODE_IMPORT);
  });
  // `wrangler deploy --dry-run` runs in a fresh copy of the repository: test/worker/deploy.test.ts.
});
