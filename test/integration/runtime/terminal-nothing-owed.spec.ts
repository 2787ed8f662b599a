/**
 * Issue 14 (cost per operation), G2: when nothing in the completing process observes the terminal points —
 * no hook of any family, no subscriber — the terminal transition records the sequence done in its own
 * statement: no hold is renewed, no later mark is written, and a reconciler finds nothing owed. With an
 * observer the sequence stays held until it ran, as before. The apps here do not subscribe to the
 * dispatcher (the runtime test kit does, which would count as an observer).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentHooksModule, AgentRuntime, OnHook } from '../../../src/index.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { within } from './runtime-test-kit.js';

const CONFIG = `
system: terminal-test
models:
  default:
    provider: scripted
    costPerTokenUsd: 0
    script:
      - content: "done"
agents:
  assistant: { model: default }
`;

const completions: string[] = [];

@Injectable()
class CompletionObserver {
  @OnHook('onComplete')
  observe(event: { reason: string }): void {
    completions.push(event.reason);
  }
}

/** One run on its own SQLite file: the completed operation, and how often the store was asked to mark its sequence done. */
async function runOnce(providers: Array<typeof CompletionObserver>) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-terminal-'));
  writeFileSync(join(dir, 'agents.yaml'), CONFIG);
  const app = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ database: `sqlite:${join(dir, 'db.sqlite')}`, configFile: join(dir, 'agents.yaml') })],
    providers,
  }).compile();
  app.useLogger(false);
  await app.init();
  try {
    const store = app.get<RuntimeStore>(RUNTIME_STORE);
    let marks = 0;
    let marked!: () => void;
    const firstMark = new Promise<void>((resolve) => (marked = resolve));
    const mark = store.markTerminalHooksDone.bind(store);
    store.markTerminalHooksDone = (operationId: string) => {
      marks++;
      marked();
      return mark(operationId);
    };
    const result = await app.get(AgentRuntime).run('hello', { agentId: 'assistant' });
    // Right after `done` settled: the mark, if any, follows it.
    const operation = (await store.getOperation(result.operationId))!;
    if (providers.length > 0) await within(firstMark, 'the terminal sequence marked done');
    return { result, operation, marks: () => marks };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('issue 14: a terminal sequence nobody observes is recorded done by the transition', () => {
  it('G2: unobserved, the transition leaves nothing owed and no mark follows; observed, onComplete is heard once and the mark follows it', async () => {
    completions.length = 0;
    const unobserved = await runOnce([]);
    const observed = await runOnce([CompletionObserver]);

    expect(unobserved.result).toMatchObject({ reason: 'done', content: 'done' });
    expect(observed.result).toMatchObject({ reason: 'done', content: 'done' });
    expect(unobserved.operation).toMatchObject({ status: 'completed', reason: 'done' });
    expect(unobserved.operation.leaseOwner).toBeUndefined();
    expect(unobserved.marks()).toBe(0); // the app is closed: no mark came later either

    expect(completions).toEqual(['done']);
    expect(observed.marks()).toBe(1);
  });
});
