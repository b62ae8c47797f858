import { parseCommandLine, runCommand, UsageError } from '../src/cli/args.ts';
import { PAGE_DIR } from './page/copies.ts';
import { bucketDestination, folderDestination, parseBucketUrl } from './upload/destinations.ts';
import { planPublication } from './upload/plan.ts';
import { publish } from './upload/run.ts';

const USAGE = `Usage: npm run publish-snapshot -- --to s3://BUCKET[/PREFIX] [--endpoint URL] [options]
       npm run publish-snapshot -- --to DIR [options]

Publishes the snapshot and the page as a static site (docs/deploy.md): the page at the site's root, the snapshot
under snapshot/. Every file is checked against the manifest first; then the snapshot's files that the live
manifest does not already list are sent, manifest.json last, then the page.

To a bucket (S3, R2, MinIO, any S3-compatible service), a text file with a gzip copy is sent as that copy under its
own name with Content-Encoding: gzip, and every file with its Content-Type and Cache-Control (what npm start sends).
To a folder (a static host's root), every file is copied as it is, with its .gz and .br copies beside it for
nginx's gzip_static or Caddy's precompressed. Credentials for a bucket come from the environment
(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, or a profile).

  --to URL|DIR       s3://bucket/prefix, or a folder
  --snapshot DIR     the snapshot (default snapshot, the build's link)
  --page DIR|none    the page's folder (default public/ of this repository; run npm run build first for its copies)
  --endpoint URL     an S3-compatible service's URL (R2: https://ACCOUNT.r2.cloudflarestorage.com)
  --region NAME      the bucket's region (default AWS_REGION, else us-east-1; R2: auto)
  --concurrency N    files sent at once (default 8)
  --prune            afterwards, remove the snapshot's files the new manifest no longer lists (run it once the
                     longest cache lifetime has passed since the previous publication)
  --quiet            print only the closing line`;

async function main(): Promise<void> {
  const values = parseCommandLine('publish-snapshot', USAGE, {
    to: { type: 'string' },
    snapshot: { type: 'string', default: 'snapshot' },
    page: { type: 'string' },
    endpoint: { type: 'string' },
    region: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    prune: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  });
  if (!values.to) throw new UsageError('Expected `--to` to be s3://bucket/prefix or a folder');
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError(`Expected \`--concurrency\` to be a whole number from 1 to 64, got "${values.concurrency}"`);
  const toBucket = values.to.startsWith('s3://');
  const bucket = toBucket ? parseBucketUrl(values.to) : null;
  if (toBucket && bucket === null) throw new UsageError(`Expected \`--to\` to be s3://bucket/prefix with a valid bucket name, got "${values.to}"`);
  if (!toBucket && /^[a-z][a-z0-9+.-]*:\/\//i.test(values.to)) throw new UsageError(`Expected \`--to\` to be s3://bucket/prefix or a folder, got "${values.to}"`);
  if (!toBucket && (values.endpoint || values.region)) throw new UsageError('Expected `--endpoint` and `--region` only with `--to s3://…`');
  if (values.endpoint !== undefined && !/^https?:\/\/[^/]+/.test(values.endpoint)) throw new UsageError(`Expected \`--endpoint\` to be an http(s) URL, got "${values.endpoint}"`);
  const pageDir = values.page === 'none' ? null : (values.page ?? PAGE_DIR);
  const log = values.quiet ? () => {} : (line: string) => console.error(line);

  const plan = await planPublication(values.snapshot, pageDir, bucket ? 'object-store' : 'folder');
  const destination = bucket ? bucketDestination({ ...bucket, endpoint: values.endpoint, region: values.region }) : folderDestination(values.to);
  const result = await publish({ plan, destination, concurrency, prune: values.prune, log });
  const n = (v: number) => v.toLocaleString('en-US');
  console.log(
    `published snapshot ${result.snapshotId} to ${destination.name}: ${n(result.sent)} files sent (${n(result.sentBytes)} bytes), ${n(result.unchanged)} unchanged${values.prune ? `, ${n(result.pruned)} pruned` : ''}`,
  );
}

runCommand('publish-snapshot', main, ['the live manifest was not replaced unless every file before it was sent; run again to finish']);
