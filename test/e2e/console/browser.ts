/**
 * Headless Chromium for the console's browser tests (DESIGN §10): Debian's `chromium` package driven by
 * playwright-core (no browser download: the machine has no network), launched with the flags of DESIGN
 * §10 and an empty profile of its own. Under CI=true a missing chromium fails the file; elsewhere the
 * file is skipped, loudly.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

export function browserSuite(file: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  if (process.env.CI === 'true') throw new Error(`${file}: ${CHROMIUM} is missing (CI=true: a missing browser is a failure; .ci/run installs the chromium package)`);
  // On stderr itself: Jest drops the console output of a file whose tests all skip.
  process.stderr.write(`\n!!! ${file}: ${CHROMIUM} is missing: the console's browser tests are SKIPPED.\n!!! apt-get install -y chromium; under CI=true this is a failure.\n`);
  return describe.skip;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A persistent context over an empty temporary profile (that is how an explicit --user-data-dir is given). */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'agent-hooks-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1440, height: 900 },
    // Nothing but the server under test is ever reached.
    offline: false,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
