import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

// The headless browser of the browser tests (OAuth consent, /docs). A system Chromium is
// preferred when one is installed (CHROMIUM_PATH, else /usr/bin/chromium); otherwise the
// headless Chromium shipped inside the @sparticuz/chromium npm package, unpacked into a
// temporary directory on first use, so `npm ci && npm test` needs no system package.

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

export async function browserExecutable(): Promise<{ executablePath: string; args: string[] }> {
  const system = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(system) && process.env.TEST_BROWSER !== 'npm') return { executablePath: system, args: ARGS };
  const { default: packaged } = await import('@sparticuz/chromium');
  return { executablePath: await packaged.executablePath(), args: [...packaged.args, '--no-first-run', '--disable-quic'] };
}

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const { executablePath, args } = await browserExecutable();
  const profileDir = await mkdtemp(path.join(tmpdir(), 'test-chromium-'));
  const context = await chromium.launchPersistentContext(profileDir, { executablePath, headless: true, args });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profileDir, { recursive: true, force: true });
    },
  };
}
