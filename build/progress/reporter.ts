/**
 * Build progress: one redrawn line with a bar on a terminal, plain lines otherwise (logs, CI), or nothing.
 * Writes to stderr so that stdout carries only the closing summary.
 */
export type Reporter = {
  stage(name: string, total?: number): void;
  update(done: number, detail?: string): void;
  end(detail?: string): void;
};

export const silentReporter: Reporter = { stage() {}, update() {}, end() {} };

export function createReporter(stream: NodeJS.WriteStream = process.stderr): Reporter {
  const tty = stream.isTTY === true;
  let name = '';
  let total: number | undefined;
  let started = 0;
  let lastDraw = 0;
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const bar = (done: number) => {
    if (!total) return '';
    const width = 24;
    const filled = Math.min(width, Math.round((done / total) * width));
    return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} `;
  };
  return {
    stage(next, nextTotal) {
      name = next;
      total = nextTotal;
      started = Date.now();
      if (tty) stream.write(`\r\x1b[2K${name} ${bar(0)}`);
    },
    update(done, detail = '') {
      const now = Date.now();
      if (!tty || now - lastDraw < 100) return;
      lastDraw = now;
      stream.write(`\r\x1b[2K${name} ${bar(done)}${detail}`);
    },
    end(detail = '') {
      const line = `${name}: ${detail}${detail ? ' ' : ''}(${elapsed()})`;
      stream.write(tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
    },
  };
}
