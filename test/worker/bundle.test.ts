import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { prepareAssets } from '../../build/worker/assets.ts';
import { bundleWorker } from '../../build/worker/bundle.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The platform's limit on a Worker, compressed (paid plan 10 MB; the free plan's 3 MB is the one kept). */
const MAX_COMPRESSED_BYTES = 3 * 1024 * 1024;
/** Any import or require of a Node module, in the forms a bundle can hold. */
const NODE_IMPORT = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["']node:[\w/]+["']/;

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

  it('wrangler deploy --dry-run accepts wrangler.toml offline and bundles the same Worker', async () => {
    const out = await mkdtemp(join(tmpdir(), 'device-510k-wrangler-'));
    const assets = await prepareAssets({ snapshotPath: null, publicDir: join(ROOT, 'public'), out: join(out, 'assets') });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', join(out, 'dist'), '--assets', assets],
      { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' }, timeout: 120_000 },
    );
    expect(stdout).toMatch(/--dry-run: exiting now/);
    expect(stdout).toMatch(/env\.ASSETS/);
    const code = await readFile(join(out, 'dist', 'index.js'), 'utf8');
    expect(code).not.toMatch(NODE_IMPORT);
    expect(code).toMatch(/device-510k\.catalog/);
    expect(gzipSync(code).length).toBeLessThan(MAX_COMPRESSED_BYTES);
  });
});
