import { spawn } from 'node:child_process';
import { cp, mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findNginx } from '../../bench/lib/nginx.ts';
import { freePort, stop, waitForHttp } from '../../bench/lib/procs.ts';
import { PUBLIC_DIR } from './static-host.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * Plain nginx as the static host: the page's files at `/`, a snapshot folder at `/snapshot/`, served as they are
 * (no gzip_static or brotli_static, nginx's own mime.types, no rules of ours). What a mirror's operator gets from a
 * stock nginx pointed at the folders.
 */
export async function startNginxHost(snapshotDir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const nginx = await findNginx();
  if (!nginx) throw new Error('nginx is not installed');
  const tmp = await testTempDir('device-510k-nginx-');
  const root = join(tmp, 'www');
  await cp(PUBLIC_DIR, root, { recursive: true });
  await symlink(await realpath(snapshotDir), join(root, 'snapshot'), 'dir');
  const port = await freePort();
  const mimeTypes = existsSync('/etc/nginx/mime.types') ? 'include /etc/nginx/mime.types;' : 'types { text/html html; application/javascript js; text/css css; application/json json; }';
  await mkdir(join(tmp, 'logs'), { recursive: true });
  await writeFile(
    join(tmp, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 256; }
http {
  ${mimeTypes}
  default_type application/octet-stream;
  access_log off;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`,
  );
  const child = spawn(nginx, ['-p', tmp, '-c', join(tmp, 'nginx.conf'), '-e', join(tmp, 'error.log')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/`;
  try {
    await waitForHttp(`${url}index.html`, 200, 15_000, () => child.exitCode === null);
  } catch (err) {
    await stop(child, 1000);
    throw err;
  }
  return { url, close: () => stop(child, 3000) };
}
