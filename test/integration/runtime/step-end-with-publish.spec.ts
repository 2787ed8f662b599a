/**
 * Issue 14 (cost per step), local mode: a step whose results are all its own commits its end (the next
 * `stepIndex`) with its last call's publish when nothing observes `afterStep` — one commit, so one version,
 * less per tool step. When something does observe it, the end stays a commit of its own after `afterStep`
 * (a crash in between delivers it again on resume), and the run is the same either way. The apps here do
 * not subscribe to the dispatcher (the runtime test kit does, which would count as an observer).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentHooksModule, AgentRuntime, OnHook } from '../../../src/index.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'step-end-test',
  models: {
    default: [toolCalls(call('clock/now')), toolCalls(call('clock/now'), call('clock/now')), answer('done at {{lastToolResult}}')],
  },
  agents: {
    assistant: { model: 'default', tools: ['clock/now'] },
  },
});

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    return 'noon';
  }
}

const afterSteps: number[] = [];

@Injectable()
class AfterStepObserver {
  @OnHook('afterStep')
  observe(event: { stepIndex: number }): void {
    afterSteps.push(event.stepIndex);
  }
}

/** A run of the script on its own SQLite file: the completed operation and its conversation. */
async function runOnce(providers: Array<typeof Clock | typeof AfterStepObserver>) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-step-end-'));
  writeFileSync(join(dir, 'agents.yaml'), CONFIG);
  const app = await Test.createTestingModule({
    imports: [AgentHooksModule.forRoot({ database: `sqlite:${join(dir, 'db.sqlite')}`, configFile: join(dir, 'agents.yaml') })],
    providers,
  }).compile();
  app.useLogger(false);
  await app.init();
  try {
    const result = await app.get(AgentRuntime).run('what time is it', { agentId: 'assistant' });
    const store = app.get<RuntimeStore>(RUNTIME_STORE);
    const operation = (await store.getOperation(result.operationId))!;
    const messages = (await store.messages(result.operationId)).map(({ role, content, toolCallId }) => ({ role, content, toolCallId: toolCallId === undefined ? undefined : 'call' }));
    return { result, operation, messages };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('issue 14: the step end rides on the last publish when nothing observes afterStep (local mode)', () => {
  it('P1: unobserved, each tool step commits its end with its last result (one version less per tool step); observed, afterStep is heard once per step before a commit of its own', async () => {
    afterSteps.length = 0;
    const unobserved = await runOnce([Clock]);
    const observed = await runOnce([Clock, AfterStepObserver]);

    // The same run either way: answer, step count, conversation.
    expect(unobserved.result).toMatchObject({ reason: 'done', content: 'done at noon' });
    expect(observed.result).toMatchObject({ reason: 'done', content: 'done at noon' });
    expect(unobserved.operation.stepIndex).toBe(observed.operation.stepIndex);
    expect(unobserved.messages).toEqual(observed.messages);
    // Two tool steps: two end commits fewer when nothing observes afterStep.
    expect(observed.operation.version - unobserved.operation.version).toBe(2);
    // Observed: one afterStep per step, at the step's own index, each before its end commit moved it on.
    expect(afterSteps).toEqual([0, 1, 2]);
  });
});
