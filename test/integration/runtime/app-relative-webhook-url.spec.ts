/**
 * W4 (LobeHub parity): an app-relative caller webhook URL (`/api/hook`) is persisted as given and resolved at
 * send time against the sending process's `appUrl`. Two "processes" (apps) with different app URLs share one
 * database (SQLite file, PostgreSQL schema): the first registers the hook and pauses for approval, the second
 * restores it and sends to its own app URL. Real loopback receivers stand for the two apps.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { AgentHook } from '../../../src/index.js';
import { RuntimeDatabase } from '../../../src/persistence/runtime-database.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { appDatabases, type DriverName } from '../persistence/test-databases.js';
import { HUMAN_LOOP_CONFIG, HumanLoopTools, untilOperation, waiting } from '../human-loop/human-loop-kit.js';
import { bootRuntime, within, type RuntimeApp } from './runtime-test-kit.js';

const { describeEach, databaseFor: databaseNamed, schema } = await appDatabases('relative-url');
const databaseFor = (driver: DriverName): string => databaseNamed(driver, 'relative');
const ok = (_req: unknown, res: { writeHead(status: number): { end(): void } }) => res.writeHead(204).end();

let appA: LoopbackReceiver;
let appB: LoopbackReceiver;

beforeAll(async () => {
  appA = await startReceiver({ '/api/hook': ok });
  appB = await startReceiver({ '/api/hook': ok });
});

afterAll(async () => {
  await appA.close();
  await appB.close();
}, 30_000);


function boot(database: string, appUrl: string): Promise<RuntimeApp> {
  return bootRuntime({ config: HUMAN_LOOP_CONFIG, providers: [HumanLoopTools], database, webhooks: { allowNetworks: ['127.0.0.1/32'], appUrl } });
}

/** The `webhook` column of the operation's caller-hook rows, read with SQL (jsonb on PostgreSQL, text on SQLite). */
async function storedWebhooks(app: RuntimeApp, driver: DriverName, operationId: string): Promise<Array<{ url: string }>> {
  const { dataSource } = await app.moduleRef.get(RuntimeDatabase).stores();
  const table = driver === 'postgres' ? `"${schema}"."agent_hooks_operation_hooks"` : '"agent_hooks_operation_hooks"';
  const rows: Array<{ webhook: unknown }> = await dataSource.query(
    `SELECT "webhook" FROM ${table} WHERE "operation_id" = ${driver === 'postgres' ? '$1' : '?'} ORDER BY "position"`,
    [operationId],
  );
  return rows.map((row) => (typeof row.webhook === 'string' ? JSON.parse(row.webhook) : row.webhook) as { url: string });
}

const hookTypesAt = (receiver: LoopbackReceiver) =>
  receiver.requests.filter((r) => r.path === '/api/hook').map((r) => (JSON.parse(r.body) as { hookType: string }).hookType);

describeEach('W4 app-relative caller webhook url on %s', (driver) => {
  it("W4: an app-relative caller webhook url is persisted as given and sent to the restoring process's own appUrl", async () => {
    const database = databaseFor(driver);
    const hooks: AgentHook[] = [
      { id: 'step-audit', type: 'beforeStep', webhook: { url: '/api/hook' } },
      { id: 'tool-audit', type: 'afterToolCall', webhook: { url: '/api/hook' } },
    ];

    const first = await boot(database, appA.url(''));
    let operationId: string;
    try {
      ({ operationId } = await first.runtime.execAgent({ agentId: 'writer', prompt: 'write', hooks }));
      await untilOperation(first.store, operationId, waiting);
      expect((await storedWebhooks(first, driver, operationId)).map((webhook) => webhook.url)).toEqual(['/api/hook', '/api/hook']);
    } finally {
      await first.close();
    }
    // Before the pause, the registering process sent to its own app.
    expect(hookTypesAt(appA)).toEqual(['beforeStep']);

    const second = await boot(database, appB.url(''));
    try {
      const [pending] = await second.store.interventions(operationId);
      await second.runtime.approve(operationId, pending!.toolCallId);
      expect(await within(second.runtime.result(operationId), 'the resumed operation', 20_000)).toMatchObject({ reason: 'done' });
      expect(hookTypesAt(appB)).toEqual(['afterToolCall', 'beforeStep']);
      expect(hookTypesAt(appA)).toEqual(['beforeStep']);
      // Sending never rewrites the row.
      expect((await storedWebhooks(second, driver, operationId)).map((webhook) => webhook.url)).toEqual(['/api/hook', '/api/hook']);
    } finally {
      await second.close();
      appA.requests.length = 0;
      appB.requests.length = 0;
    }
  }, 60_000);
});
