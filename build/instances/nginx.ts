import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usageFailure } from '../../src/cli/args.ts';

/**
 * nginx (from the distribution, `nginx` on PATH) in front of N stateless API instances: round robin, keep-alive to
 * the upstreams, and a request that fails to connect tried on the next instance. Its own prefix folder holds the
 * configuration, logs and pid file, so it runs without root and beside any system nginx.
 *
 *   npx tsx build/instances/nginx.ts 8080 http://127.0.0.1:8081 http://127.0.0.1:8082
 */
export function nginxConfig(port: number, upstreams: readonly string[]): string {
  const servers = upstreams.map((u) => `    server ${new URL(u).host} max_fails=0;`).join('\n');
  return `worker_processes 1;
daemon off;
pid nginx.pid;
error_log error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path tmp/body;
  proxy_temp_path tmp/proxy;
  fastcgi_temp_path tmp/fastcgi;
  uwsgi_temp_path tmp/uwsgi;
  scgi_temp_path tmp/scgi;
  upstream api {
${servers}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://api;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
    }
  }
}
`;
}

export type RunningNginx = { url: string; process: ChildProcess; stop: () => Promise<void> };

export async function startNginx(port: number, upstreams: readonly string[]): Promise<RunningNginx> {
  const prefix = await mkdtemp(join(tmpdir(), 'device-510k-nginx-'));
  await mkdir(join(prefix, 'tmp'), { recursive: true });
  await writeFile(join(prefix, 'nginx.conf'), nginxConfig(port, upstreams));
  const child = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr.trim()}`);
    const up = await fetch(`${url}/healthz`).then(() => true, () => false);
    if (up) break;
    if (i > 100) throw new Error(`nginx did not answer on ${url}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // Its prefix folder (configuration, logs, temporary files) goes with it.
  const stop = async () => {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGQUIT');
    });
    await rm(prefix, { recursive: true, force: true });
  };
  return { url, process: child, stop };
}

const USAGE = `Usage: npx tsx build/instances/nginx.ts PORT UPSTREAM...

Runs nginx (from PATH) on 127.0.0.1:PORT in front of the API instances at the UPSTREAM URLs, round robin; Ctrl-C stops
it. Example: npx tsx build/instances/nginx.ts 8080 http://127.0.0.1:8081 http://127.0.0.1:8082`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  const option = args.find((a) => a.startsWith('-'));
  if (option !== undefined) usageFailure('nginx', new Error(`Unknown option '${option}'`));
  const [port, ...upstreams] = args;
  if (!port || !/^\d+$/.test(port) || upstreams.length === 0) usageFailure('nginx', new Error('Expected a PORT and at least one UPSTREAM URL'));
  const nginx = await startNginx(Number(port), upstreams);
  console.log(`nginx at ${nginx.url} in front of ${upstreams.join(', ')}; Ctrl-C stops it.`);
  process.on('SIGINT', () => void nginx.stop().then(() => process.exit(0)));
}
