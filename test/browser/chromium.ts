import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium, installed by .ci/browser-deps.sh; the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Why the browser suite cannot run here, or null when it can. A missing browser skips the suite on a developer's
 * machine, but in CI (where .ci/browser-deps.sh installs it) the suite runs and fails loudly instead.
 */
export function browserSkipReason(): string | null {
  if (existsSync(CHROMIUM) || process.env.CI) return null;
  return `${CHROMIUM} is missing: run .ci/browser-deps.sh (apt-get install chromium) to run the browser tests`;
}

export type Browser = { context: BrowserContext; close: () => Promise<void> };

/** A fresh browser with its own throw-away profile, so no cache or storage carries over between runs. */
export async function launchChromium(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'device-510k-chromium-'));
  // launchPersistentContext is how playwright passes --user-data-dir; the profile is new and empty each time.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
