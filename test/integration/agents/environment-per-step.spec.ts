/**
 * L1, L3 within one run: the runtime reads the environment hooks once when a step begins and passes that
 * read to the step's dispatches (issue 14 item 3), so every step — not only a resume — sees the current
 * environment. A tool of the run itself sets and then removes the environment hook between steps.
 */
import { Injectable } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { bootRuntime, within, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { startReceiver, type LoopbackReceiver } from '../../unit/webhooks/loopback-receiver.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const ENV_VARS = ['AGENT_HOOK_WEBHOOK_URL', 'AGENT_HOOK_WEBHOOK_TOKEN', 'AGENT_HOOK_WEBHOOK_EVENTS'];

const CONFIG = scriptedConfig({
  system: 'environment-per-step',
  models: {
    toggling: [toolCalls(call('env/toggle')), toolCalls(call('env/toggle')), answer('done')],
  },
  agents: {
    toggler: { model: 'toggling', tools: ['env/*'] },
  },
});

let receiver: LoopbackReceiver;
let app: RuntimeApp | undefined;

function removeEnvironmentHook(): void {
  for (const name of ENV_VARS) delete process.env[name];
}

/** The first call sets the environment hook, the second removes it: an operator changing it mid-run. */
@Injectable()
class EnvironmentToggle {
  @Tool({ identifier: 'env', apiName: 'toggle', description: 'sets or removes the environment hook', parameters: { type: 'object', properties: {} } })
  toggle(): string {
    if (process.env.AGENT_HOOK_WEBHOOK_URL === undefined) {
      process.env.AGENT_HOOK_WEBHOOK_URL = receiver.url('/env');
      process.env.AGENT_HOOK_WEBHOOK_TOKEN = 'env-token';
      process.env.AGENT_HOOK_WEBHOOK_EVENTS = 'afterToolCall,afterStep';
      return 'set';
    }
    // The URL alone turns the hook off; the token stays, as step 1's sends still expand it (S2).
    delete process.env.AGENT_HOOK_WEBHOOK_URL;
    return 'removed';
  }
}

/** The `type` and `stepIndex` of each event the environment webhook received, in order. */
function received(): Array<[string, number]> {
  return receiver.requests
    .filter((r) => r.path === '/env')
    .map((r) => JSON.parse(r.body) as { type: string; stepIndex: number })
    .map(({ type, stepIndex }) => [type, stepIndex]);
}

beforeAll(async () => {
  receiver = await startReceiver({ '/env': (req, res) => req.on('end', () => res.writeHead(204).end()) });
});
afterAll(() => receiver.close());
beforeEach(() => {
  receiver.requests.length = 0;
  removeEnvironmentHook();
});
afterEach(async () => {
  removeEnvironmentHook();
  await app?.close();
  app = undefined;
});

describe('L1: every step reads the current environment', () => {
  it('L1, L3: a hook set during step 0 applies from step 1; removed during step 1, it no longer applies at step 2', async () => {
    app = await bootRuntime({ config: CONFIG, providers: [EnvironmentToggle], webhooks: { allowNetworks: ['127.0.0.1/32'] } });
    const { done } = await app.runtime.execAgent({ agentId: 'toggler', prompt: 'toggle twice' });
    expect((await within(done, 'done')).content).toBe('done');
    // Each step's dispatches share the read taken when the step began: step 1 began with the hook set.
    expect(received()).toEqual([
      ['afterToolCall', 1],
      ['afterStep', 1],
    ]);
  });
});
