/**
 * Issue 14 (cost per operation), A3 / G2: `on_run_start` commits its end so that a takeover knows it ran —
 * but when nothing in the creating process observes the point (no hook of any family, no subscriber),
 * nothing runs and nothing changes, and no commit is made for it. Observed, it runs once and commits, as
 * before. The apps boot with `observe: false` (a dispatcher subscriber would count as an observer).
 */
import { Injectable } from '@nestjs/common';
import { OnHook, RunContext } from '../../../src/index.js';
import { neverStarted } from '../../../src/runtime/run-start.js';
import { bootRuntime, oneAnswerConfig } from './runtime-test-kit.js';

const CONFIG = oneAnswerConfig('run-start-test');

const starts: string[] = [];

@Injectable()
class RunStartObserver {
  @OnHook('on_run_start')
  observe({ payload }: { payload: RunContext }): RunContext {
    starts.push(payload.runId);
    return payload;
  }
}

async function runOnce(providers: Array<typeof RunStartObserver>) {
  const app = await bootRuntime({ config: CONFIG, providers, observe: false });
  try {
    const result = await app.runtime.run('hello', { agentId: 'assistant' });
    return { result, operation: (await app.store.getOperation(result.operationId))! };
  } finally {
    await app.close();
  }
}

describe('issue 14: on_run_start is committed only where something observes it', () => {
  it('A3: unobserved, the run commits one version fewer and is the same run; observed, the hook runs once and its end is committed', async () => {
    starts.length = 0;
    const unobserved = await runOnce([]);
    const observed = await runOnce([RunStartObserver]);

    expect(unobserved.result).toMatchObject({ reason: 'done', content: 'done' });
    expect(observed.result).toMatchObject({ reason: 'done', content: 'done' });
    expect(starts).toEqual([observed.result.operationId]);
    expect(observed.operation.version - unobserved.operation.version).toBe(1);
    expect(neverStarted(unobserved.operation)).toBe(false); // the first step's commit marked it started
  });
});
