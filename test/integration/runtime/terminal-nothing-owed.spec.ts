/**
 * Issue 14 (cost per operation), G2: when nothing in the completing process observes the terminal points —
 * no hook of any family, no subscriber — the terminal transition records the sequence done in its own
 * statement: no hold is renewed, no later mark is written, and a reconciler finds nothing owed. With an
 * observer the sequence stays held until it ran, as before. The apps boot with `observe: false` (a
 * dispatcher subscriber would count as an observer).
 */
import { Injectable } from '@nestjs/common';
import { OnHook } from '../../../src/index.js';
import { bootRuntime, oneAnswerConfig, within } from './runtime-test-kit.js';

const CONFIG = oneAnswerConfig('terminal-test');

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
  const app = await bootRuntime({ config: CONFIG, providers, observe: false });
  try {
    const store = app.store;
    let marks = 0;
    let marked!: () => void;
    const firstMark = new Promise<void>((resolve) => (marked = resolve));
    const mark = store.markTerminalHooksDone.bind(store);
    store.markTerminalHooksDone = (operationId: string) => {
      marks++;
      marked();
      return mark(operationId);
    };
    const result = await app.runtime.run('hello', { agentId: 'assistant' });
    // Right after `done` settled: the mark, if any, follows it.
    const operation = (await store.getOperation(result.operationId))!;
    if (providers.length > 0) await within(firstMark, 'the terminal sequence marked done');
    return { result, operation, marks: () => marks };
  } finally {
    await app.close();
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
