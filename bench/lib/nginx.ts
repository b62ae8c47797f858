import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { freePort, stop, track, waitForHttp } from './procs.ts';

/**
 * nginx as the physical limit for lookups: Debian's package serving the snapshot's precomputed files as plain GETs,
 * started by the benchmark on 127.0.0.1 with a configuration written into a temporary folder (no daemon, pid and
 * logs in that folder), and stopped by its pid when the measurement is done.
 */
export type Nginx = { url: string; pid: number; stop: () => Promise<void> };

export const NGINX_MISSING = 'nginx was not found on PATH or in /usr/sbin; install it (Debian/Ubuntu: `sudo apt-get install -y nginx`) to measure the nginx column. It is skipped.';

/** The nginx binary, or null when it is not installed. */
export async function findNginx(): Promise<string | null> {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const path = join(dir, 'nginx');
    if (await access(path, constants.X_OK).then(() => true, () => false)) return path;
  }
  return null;
}

/**
 * One worker process, like our server's one Node process: the ratio compares one core with one core (or, with
 * `workers: 'auto'`, one per core against our WORKERS=auto). Keep-alive
 * connections are not recycled during a round (Node's server does not recycle them either); logs are on, as ours are.
 */
function config(tmp: string, root: string, port: number, workers: number | 'auto'): string {
  return `worker_processes ${workers};
daemon off;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 1024; }
http {
  types { application/json json; text/html html; application/javascript js; text/css css; }
  default_type application/octet-stream;
  charset utf-8;
  charset_types application/json;
  access_log ${tmp}/access.log;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  open_file_cache max=20000 inactive=60s;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    add_header Access-Control-Allow-Origin * always;
    location / { try_files $uri =404; }
  }
}
`;
}

/** Starts nginx over `root` (a snapshot directory) and waits until it serves `probe`. */
export async function startNginx(binary: string, tmp: string, root: string, probe: string, workers: number | 'auto' = 1): Promise<Nginx> {
  const port = await freePort();
  const conf = join(tmp, 'nginx.conf');
  await writeFile(conf, config(tmp, root, port, workers));
  const child: ChildProcess = track(spawn(binary, ['-p', tmp, '-c', conf, '-e', join(tmp, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/${probe}`, 200, 15_000, () => child.exitCode === null && child.signalCode === null);
  } catch (err) {
    await stop(child, 1000);
    throw new Error(`nginx did not start: ${(err as Error).message}${stderr ? `; it said: ${stderr.trim()}` : ''}`);
  }
  return { url, pid: child.pid!, stop: () => stop(child, 3000) };
}
