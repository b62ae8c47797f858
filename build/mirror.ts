import { parseCommandLine, runCommand, UsageError } from '../src/cli/args.ts';
import { MIRROR_DEFAULTS, runMirror } from './mirror/run.ts';

const USAGE = `Usage: npm run mirror -- --from URL --to DIR [options]

Copies a published snapshot from any server or CDN by its manifest: only files whose sha256 changed are
downloaded, every file is checked against the manifest, an interrupted copy resumes, and the copy is switched in
atomically (DIR becomes a symbolic link, like the build's --out). Serve it with SNAPSHOT_PATH=DIR npm start, or
with any static host.

  --from URL        where manifest.json is, e.g. https://data.example.org/snapshot
  --to DIR          the local snapshot link (default ${MIRROR_DEFAULTS.to})
  --concurrency N   downloads at once (default ${MIRROR_DEFAULTS.concurrency})
  --timeout MS      per request (default ${MIRROR_DEFAULTS.timeoutMs})
  --retries N       retries after the first attempt (default ${MIRROR_DEFAULTS.retries})
  --max-manifest-bytes N
                    the most manifest.json may be, as sent or decoded (default ${MIRROR_DEFAULTS.maxManifestBytes});
                    every other file is cut off past the size the manifest lists for it
  --quiet           print only the closing line`;

async function main(): Promise<void> {
  const values = parseCommandLine('mirror', USAGE, {
    from: { type: 'string' },
    to: { type: 'string', default: MIRROR_DEFAULTS.to },
    concurrency: { type: 'string' },
    timeout: { type: 'string' },
    retries: { type: 'string' },
    'max-manifest-bytes': { type: 'string' },
    quiet: { type: 'boolean', default: false },
  });
  if (!values.from) throw new UsageError('Expected `--from` to be the URL of a snapshot (where its manifest.json is)');
  const num = (name: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`Expected \`--${name}\` to be a whole number, got "${v}"`);
    return n;
  };
  const result = await runMirror({
    from: values.from,
    to: values.to,
    concurrency: num('concurrency', values.concurrency),
    timeoutMs: num('timeout', values.timeout),
    retries: num('retries', values.retries),
    maxManifestBytes: num('max-manifest-bytes', values['max-manifest-bytes']),
    log: values.quiet ? undefined : (line) => console.error(line),
  });
  const c = result.counts;
  const n = (v: number) => v.toLocaleString('en-US');
  console.log(
    result.outcome === 'current'
      ? `mirror current: ${values.to} already is snapshot ${result.snapshotId}`
      : `mirror updated: ${values.to} is snapshot ${result.snapshotId}; ${c.origin} files downloaded (${n(result.wireBytes)} bytes on the wire, ${n(result.writtenBytes)} bytes written), ${c.derived} compressed here, ${c.local} unchanged, ${c.staged} resumed`,
  );
}

runCommand('mirror', main, ['the local copy, if any, was left as it was; run again to resume']);
