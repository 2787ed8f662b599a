/**
 * SPEC G2 with A3's first hook: an operation whose creator died right after creating it — before
 * `on_run_start` committed — is taken over by a reconciler, which runs `on_run_start` first, once, then
 * its steps; an operation that got past it never runs it again when taken over. Local mode, both drivers.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { HookInvocation, OnHook, RunContext } from '../../../src/index.js';
import { appDatabases } from '../persistence/test-databases.js';
import { bootRuntime, eventually, type RuntimeApp } from '../runtime/runtime-test-kit.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'recovery-run-start',
  models: {
    plain: [answer('hello')],
  },
  agents: {
    greeter: { model: 'plain' },
  },
});

const started: string[] = [];

@Injectable()
class StartHooks {
  @OnHook('on_run_start')
  onRunStart(invocation: HookInvocation): RunContext {
    const context = invocation.payloadAs(RunContext);
    started.push(context.runId);
    return context;
  }
}

const { describeEach, databaseFor } = await appDatabases('recovery-run-start');
const apps: RuntimeApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  started.length = 0;
});

describeEach('G2: on_run_start of an operation whose creator died on %s', (driver) => {
  it('G2: a reconciler that takes over a never-started operation runs on_run_start once, then the run', async () => {
    const app = await bootRuntime({ config: CONFIG, providers: [StartHooks], database: databaseFor(driver, 'never-started'), module: { recovery: { leaseMs: 300, reconcileEveryMs: 100 } } });
    apps.push(app);
    // What a process that died right after creating the operation leaves: the row, nothing more.
    const id = randomUUID();
    await app.store.createOperation({ id, agentId: 'greeter', prompt: 'hi', runContext: { metadata: {} }, callerHooks: [] });
    await eventually(async () => (await app.store.getOperation(id))?.status === 'completed', 'the taken-over operation completes');
    expect((await app.store.getOperation(id))?.reason).toBe('done');
    expect(started.filter((runId) => runId === id)).toHaveLength(1);
  });

  it('G2: a never-started operation created under its dead creator\'s lease is taken over once that lease expired: on_run_start once, then the run', async () => {
    const app = await bootRuntime({ config: CONFIG, providers: [StartHooks], database: databaseFor(driver, 'leased-at-create'), module: { recovery: { leaseMs: 300, reconcileEveryMs: 100 } } });
    apps.push(app);
    // What a local-mode creator that died right after its INSERT leaves: the row, with its lease (NewOperation.lease).
    const id = randomUUID();
    await app.store.createOperation({ id, agentId: 'greeter', prompt: 'hi', runContext: { metadata: {} }, callerHooks: [], lease: { owner: 'dead-process:holding', ttlMs: 300 } });
    expect((await app.store.getOperation(id))?.leaseOwner).toBe('dead-process:holding');
    await eventually(async () => (await app.store.getOperation(id))?.status === 'completed', 'the taken-over operation completes');
    expect((await app.store.getOperation(id))?.reason).toBe('done');
    expect(started.filter((runId) => runId === id)).toHaveLength(1);
  });

  it('G2: an operation started normally runs on_run_start once (its end is committed, so no takeover runs it again)', async () => {
    const app = await bootRuntime({ config: CONFIG, providers: [StartHooks], database: databaseFor(driver, 'started'), module: { recovery: { leaseMs: 300, reconcileEveryMs: 100 } } });
    apps.push(app);
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'greeter', prompt: 'hi' });
    expect((await done).reason).toBe('done');
    expect((await app.store.getOperation(operationId))?.version).toBeGreaterThan(1);
    expect(started.filter((runId) => runId === operationId)).toHaveLength(1);
  });
});
