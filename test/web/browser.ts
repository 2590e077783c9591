/**
 * Debian's chromium (/usr/bin/chromium), driven by playwright-core, which
 * uses the system browser and downloads none. A fresh profile directory per
 * launch; the flags keep it off this machine's closed network. When the
 * browser is missing the test fails with the command that installs it
 * (`.ci/run` runs that command).
 */
import { existsSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterEach } from 'vitest';
import { tempDir } from '../support/test-driver.js';

export const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const open = new Set<BrowserContext>();
afterEach(async () => {
  await Promise.all([...open].map((c) => c.close()));
  open.clear();
});

/** A headless chromium with a fresh --user-data-dir; closed after the test. */
export async function launchBrowser(): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the web console's browser tests need Debian's chromium. Install it with: apt-get update && apt-get install -y --no-install-recommends chromium (with sudo when not root; .ci/run does this)`,
    );
  }
  const context = await chromium.launchPersistentContext(tempDir('agentbus-chromium-'), { executablePath: CHROMIUM, headless: true, args: FLAGS });
  open.add(context);
  return context;
}

/** Where screenshots of the main views are kept (test artifacts; not committed). */
export function artifactPath(name: string): string {
  const dir = join(process.cwd(), '.tmp', 'artifacts', 'web-console');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
