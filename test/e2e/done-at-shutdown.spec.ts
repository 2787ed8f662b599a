/**
 * SPEC G4 (graceful shutdown) for every `done` the runtime hands out: closing the app while nobody awaits
 * one is never an unhandled rejection, whichever path created it — the operation this process started
 * (live), an idempotent retry answered with a stored open operation (restored), one whose row already
 * reads completed, one another app on the same database drives, and `result()` of the last two. A caller
 * who awaits still sees `RuntimeShuttingDownError`. The host is the BUILT package in a plain Node child
 * process (test/e2e/fixtures/done-at-shutdown.mjs): no test runner stands between the promise and Node.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { appDatabases } from '../integration/persistence/test-databases.js';
import { ensureBuilt } from './support/server-process.js';

const run = promisify(execFile);
const { describeEach, databaseFor } = await appDatabases('done-at-shutdown');

beforeAll(() => ensureBuilt(), 240_000);

describeEach('G4: done at shutdown on %s', (driver) => {
  it('G4: no done the runtime hands out is an unhandled rejection when the app closes; an awaiting caller still sees the rejection', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'agent-hooks-done-'));
    try {
      const { stdout } = await run(process.execPath, ['test/e2e/fixtures/done-at-shutdown.mjs', databaseFor(driver, 'done'), folder], { timeout: 60_000 });
      const report = JSON.parse(stdout.trim().split('\n').pop()!) as { unhandled: unknown[]; seen: Record<string, string> };
      expect(report.unhandled).toEqual([]);
      // The retry and result() of a completed operation read its row while the app closes: either the read
      // wins (resolved) or the closed database refuses it (rejected) — never unhandled, never hanging.
      const raced = expect.stringMatching(/^(resolved:done:hello there|rejected:\w+)$/);
      expect(report.seen).toEqual({
        live: 'rejected:RuntimeShuttingDownError',
        restored: 'rejected:RuntimeShuttingDownError',
        completedAwaited: 'resolved:done:hello there',
        completed: raced,
        completedResult: raced,
        otherProcess: 'rejected:RuntimeShuttingDownError',
        otherProcessResult: 'rejected:RuntimeShuttingDownError',
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 90_000);
});
