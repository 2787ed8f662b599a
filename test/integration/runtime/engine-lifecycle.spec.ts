import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentHooksModule, EngineContext, HookFailedError, HookInvocation, OnHook } from '../../../src/index.js';

const seen: string[] = [];
let failStart = false;

@Injectable()
class LifecycleHooks {
  @OnHook('on_engine_start')
  start(invocation: HookInvocation) {
    const engine = invocation.payloadAs(EngineContext);
    seen.push(`start ${engine.systemName}`);
    if (failStart) throw new Error('missing CONTEXT7_API_KEY');
  }

  @OnHook('on_engine_stop')
  stop(invocation: HookInvocation) {
    seen.push(`stop ${invocation.payloadAs(EngineContext).systemName}`);
    throw new Error('flush failed'); // best-effort: never propagates
  }
}

beforeEach(() => {
  seen.length = 0;
  failStart = false;
});

describe('E2 engine lifecycle', () => {
  it('on_engine_start runs once at bootstrap, on_engine_stop once at shutdown (its error never propagates)', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [LifecycleHooks] }).compile();
    await moduleRef.init();
    expect(seen).toEqual(['start nest-agent-hooks']);
    await expect(moduleRef.close()).resolves.toBeUndefined();
    expect(seen).toEqual(['start nest-agent-hooks', 'stop nest-agent-hooks']);
  });

  it('E6: an on_engine_start failure under fail stops the start with HookFailedError naming the hook', async () => {
    failStart = true;
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [LifecycleHooks] }).compile();
    const error = await moduleRef.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookFailedError);
    expect((error as HookFailedError).message).toContain('LifecycleHooks.start');
    expect((error as HookFailedError).message).not.toContain('CONTEXT7');
    await moduleRef.close();
  });
});
