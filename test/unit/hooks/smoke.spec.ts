import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentHooksModule, HookDispatcher, OnHook, type AfterStepEvent } from '../../../src/index.js';

@Injectable()
class Observer {
  seen: number[] = [];
  @OnHook('afterStep')
  onStep(event: AfterStepEvent) {
    this.seen.push(event.stepIndex);
  }
}

describe('smoke', () => {
  it('boots the module and dispatches to a decorator hook', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })], providers: [Observer] }).compile();
    await moduleRef.init();
    const dispatcher = moduleRef.get(HookDispatcher);
    await dispatcher.dispatch('afterStep', { stepIndex: 3, operationId: 'op' } as AfterStepEvent);
    expect(moduleRef.get(Observer).seen).toEqual([3]);
    await moduleRef.close();
  });
});
