import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writePageCopies } from '../../build/page/copies.ts';
import { findNginx, NGINX_MISSING } from './nginx.ts';
import { freePort, stop, track, waitForHttp } from './procs.ts';

const DEPLOY = fileURLToPath(new URL('../../docs/deploy.md', import.meta.url));
const PUBLIC = fileURLToPath(new URL('../../public', import.meta.url));

/** The configuration docs/deploy.md shows after `<!-- static-config: NAME -->`, exactly as written there. */
export function documentedConfig(name: 'nginx' | 'caddy'): string {
  const m = new RegExp(`<!-- static-config: ${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(readFileSync(DEPLOY, 'utf8'));
  if (!m) throw new Error(`docs/deploy.md shows no configuration marked static-config: ${name}`);
  return m[1]!;
}

/**
 * public/ (or `from`, another checkout's public/) as a static host gets it after `npm run build`: a copy with the
 * precompressed copies written into it.
 */
export async function pageWithCopies(into: string, from = PUBLIC): Promise<string> {
  const dir = join(into, 'public');
  await cp(from, dir, { recursive: true, filter: (src) => !/\.(br|gz)$/.test(src) });
  await writePageCopies(dir);
  return dir;
}

export type StaticHost = { url: string; publicDir: string; close: () => Promise<void> };

/**
 * Debian's nginx serving the page and a snapshot with exactly the server block docs/deploy.md shows (its paths and
 * port put in), inside a minimal nginx.conf of a temporary folder (pid, logs and temp paths there). The page is
 * `publicDir` as it is, or a copy of public/ (or of `copyFrom`) with its precompressed copies.
 */
export async function startDocumentedNginx(snapshotDir: string, publicDir?: string, { copyFrom }: { copyFrom?: string } = {}): Promise<StaticHost> {
  const binary = await findNginx();
  if (!binary) throw new Error(NGINX_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'device-510k-static-nginx-'));
  const site = publicDir ?? (await pageWithCopies(dir, copyFrom));
  const snapshot = await realpath(snapshotDir);
  const port = await freePort();
  const server = documentedConfig('nginx')
    .replaceAll('/srv/device-510k/public', site)
    .replaceAll('/srv/device-510k/snapshot/', `${snapshot}/`)
    .replace(/listen 80;/, `listen 127.0.0.1:${port};`);
  await writeFile(
    join(dir, 'nginx.conf'),
    `worker_processes 1;\ndaemon off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\n${process.getuid?.() === 0 ? 'user root;\n' : ''}` +
      `events { worker_connections 256; }\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n` +
      `  fastcgi_temp_path ${dir}/fastcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;\n${server}\n}\n`,
  );
  const child = track(spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' }));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await stop(child, 3000);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/index.html`, 200, 15_000, () => child.exitCode === null);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, publicDir: site, close };
}
