import { CompletionWaits } from '../../../src/runtime/completion-waits.js';
import { bootRuntime, type RuntimeApp } from './runtime-test-kit.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'idempotency',
  models: {
    quiet: [answer('hello {{prompt}}')],
  },
  agents: {
    assistant: { model: 'quiet' },
  },
});

let app: RuntimeApp;

beforeAll(async () => {
  app = await bootRuntime({ config: CONFIG });
});

afterAll(async () => {
  await app.close();
});

describe('execAgent idempotency (DESIGN §7 Idempotency-Key)', () => {
  it('the same owner and key return the same operation, run once; its done resolves with its result', async () => {
    const first = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'one', ownerId: 'alice', idempotencyKey: 'k-1' });
    const again = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'two', ownerId: 'alice', idempotencyKey: 'k-1' });
    expect(again.operationId).toBe(first.operationId);
    const [a, b] = await Promise.all([first.done, again.done]);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ reason: 'done', content: 'hello one' });
    // Once completed, a retry still answers with the finished operation, from the database.
    const late = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'three', ownerId: 'alice', idempotencyKey: 'k-1' });
    expect(late.operationId).toBe(first.operationId);
    await expect(late.done).resolves.toMatchObject({ reason: 'done', content: 'hello one' });
    expect(app.registry.operationCount).toBe(0);
    expect((await app.store.messages(first.operationId)).filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one']);
  });

  it('another owner with the same key gets its own operation', async () => {
    const alice = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'a', ownerId: 'alice', idempotencyKey: 'k-2' });
    const bob = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'b', ownerId: 'bob', idempotencyKey: 'k-2' });
    expect(bob.operationId).not.toBe(alice.operationId);
    await expect(bob.done).resolves.toMatchObject({ content: 'hello b' });
    await alice.done;
  });

  it('G8: a retry naming an operation whose row reads completed resolves done from that row, with no completion wait', async () => {
    const first = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'once', ownerId: 'carol', idempotencyKey: 'k-3' });
    await first.done;
    const waits = app.moduleRef.get(CompletionWaits);
    const late = await app.runtime.execAgent({ agentId: 'assistant', prompt: 'again', ownerId: 'carol', idempotencyKey: 'k-3' });
    // Nothing is waited on: the stored row already said completed.
    expect(waits.watching).toBe(0);
    await expect(late.done).resolves.toEqual(await first.done);
    await expect(app.runtime.result(first.operationId)).resolves.toMatchObject({ reason: 'done', content: 'hello once' });
  });
});
