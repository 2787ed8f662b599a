/**
 * SPEC G6 identifier limits and G8 request digests through the real runtime, on SQLite and PostgreSQL:
 * an identifier the database columns cannot hold is refused where it enters (never a `QueryFailedError`
 * mid-operation on one database and stored on the other), and an idempotency key reused with another
 * request is refused, also by an app restarted on the same database. Under CI=true an unreachable
 * PostgreSQL fails the suite.
 */
import { Injectable } from '@nestjs/common';
import { HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { MAX_IDENTIFIER_LENGTH } from '../../../src/hooks/input-limits.js';
import { IdempotencyKeyReusedError } from '../../../src/runtime/runtime-errors.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { ToolConfigurationError } from '../../../src/runtime/tools/tool-errors.js';
import { appDatabases } from '../persistence/test-databases.js';
import { bootRuntime, guardUnhandledRejections, rejectionOf, type RuntimeApp } from './runtime-test-kit.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'input-limits',
  models: {
    quiet: [answer('hello {{prompt}}')],
  },
  agents: {
    assistant: { model: 'quiet' },
  },
});

guardUnhandledRejections();

const { describeEach, databaseFor } = await appDatabases('limits');

describeEach('G6 identifiers and G8 digests on %s', (driver) => {
  let app: RuntimeApp;
  const database = databaseFor(driver, 'limits');

  beforeAll(async () => {
    app = await bootRuntime({ config: CONFIG, database });
  }, 30_000);

  afterAll(async () => {
    await app?.close();
  });

  it('G6: a caller hook id over the identifier limit is refused at registration, naming the field; nothing is stored', async () => {
    const id = 'h'.repeat(3_000);
    const webhookHook = { id, type: 'afterStep' as const, webhook: { url: 'https://example.com/hook' } };
    const refused = await rejectionOf(app.runtime.execAgent({ agentId: 'assistant', prompt: 'hi', ownerId: 'alice', hooks: [webhookHook] }));
    expect(refused).toBeInstanceOf(HookConfigurationError);
    expect((refused as Error).message).toBe(`hooks[0]: id must be at most ${MAX_IDENTIFIER_LENGTH} characters`);
    // In-process handlers are not stored, but their timeline rows would be: refused the same way.
    const handlerHook = { id, type: 'afterStep' as const, handler: () => undefined };
    await expect(app.runtime.execAgent({ agentId: 'assistant', prompt: 'hi', hooks: [handlerHook] })).rejects.toThrow(HookConfigurationError);
    expect(app.registry.operationCount).toBe(0);
    // At the limit it is accepted and round-trips on this database.
    const atLimit = { ...webhookHook, id: 'h'.repeat(MAX_IDENTIFIER_LENGTH) };
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'hi', hooks: [atLimit] });
    await done;
    expect((await app.store.callerHooks(operationId)).map((hook) => hook.hookId)).toEqual([atLimit.id]);
  });

  it('G8: the same key with another request digest is idempotency_key_reused, also after a restart; keys are per owner', async () => {
    const first = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'one', ownerId: 'alice', idempotencyKey: 'g8-k', idempotencyDigest: 'a'.repeat(64) });
    const same = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'one', ownerId: 'alice', idempotencyKey: 'g8-k', idempotencyDigest: 'a'.repeat(64) });
    expect(same.operationId).toBe(first.operationId);
    await expect(app.runtime.execAgent({ agentId: 'assistant', prompt: 'two', ownerId: 'alice', idempotencyKey: 'g8-k', idempotencyDigest: 'b'.repeat(64) })).rejects.toThrow(
      IdempotencyKeyReusedError,
    );
    const bob = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'two', ownerId: 'bob', idempotencyKey: 'g8-k', idempotencyDigest: 'b'.repeat(64) });
    expect(bob.operationId).not.toBe(first.operationId);
    await Promise.all([first.done, bob.done]);
    expect(app.registry.operationCount).toBe(0);

    // The digest is stored with the operation: a new app on the same database still tells them apart.
    await app.close();
    app = await bootRuntime({ config: CONFIG, database });
    await expect(app.runtime.execAgent({ agentId: 'assistant', prompt: 'two', ownerId: 'alice', idempotencyKey: 'g8-k', idempotencyDigest: 'b'.repeat(64) })).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    const retry = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'one', ownerId: 'alice', idempotencyKey: 'g8-k', idempotencyDigest: 'a'.repeat(64) });
    expect(retry.operationId).toBe(first.operationId);
    await retry.done;
  }, 60_000);
});

@Injectable()
class LongNamedTool {
  @Tool({ identifier: 't'.repeat(3_000), apiName: 'run', description: 'too long a name', parameters: { type: 'object', properties: {} } })
  run(): string {
    return 'ran';
  }
}

describe('G6 tool identifiers', () => {
  it('G6: a @Tool identifier over the identifier limit stops the start, naming the field', async () => {
    const refused = await rejectionOf(bootRuntime({ config: CONFIG, providers: [LongNamedTool] }));
    expect(refused).toBeInstanceOf(ToolConfigurationError);
    expect((refused as Error).message).toContain(`identifier must be at most ${MAX_IDENTIFIER_LENGTH} characters`);
  });
});
