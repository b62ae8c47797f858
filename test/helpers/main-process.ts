import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** `npm start` as a process of its own (src/main.ts under tsx), with its output kept as it arrives. */
export class MainProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout = '';
  stderr = '';

  /** `env` is added to this process's environment, with PORT=0 and HOST=127.0.0.1 unless given. */
  constructor(env: Record<string, string>, options: { cwd?: string; detached?: boolean } = {}) {
    this.child = spawn(process.execPath, ['--import', TSX, MAIN], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    this.child.stdout?.on('data', (c: Buffer) => (this.stdout += c.toString()));
    this.child.stderr?.on('data', (c: Buffer) => (this.stderr += c.toString()));
  }

  /** Every line written so far, stdout's and stderr's. */
  get lines(): string[] {
    return `${this.stdout}\n${this.stderr}`.split('\n').filter((l) => l.length > 0);
  }
}
