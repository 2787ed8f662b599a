/**
 * DESIGN §4, one engine: the runtime drives steps only through the `StepScheduler` port. Local mode gets
 * the scheduler that runs steps here under the lease, queue mode the one that hands them to BullMQ; the
 * operations' start, the reconciler and the queue's worker all reach steps through it, so a step of either mode runs
 * the same code (`StepExecutor.step`) with the same callbacks.
 */
import { LocalStepScheduler } from '../../../src/runtime/local-step-scheduler.js';
import { STEP_SCHEDULER, type StepHost, type StepScheduler } from '../../../src/runtime/step-scheduler.port.js';
import { QueuedStepScheduler } from '../../../src/queue/queued-step-scheduler.js';
import { OperationStart } from '../../../src/runtime/operation-start.js';
import { dropSchema, postgresDatabaseOption, postgresSuite, uniqueSchemaName } from '../persistence/test-databases.js';
import { bootRuntime, type RuntimeApp } from './runtime-test-kit.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

const describePostgres = await postgresSuite('runtime/step-scheduler.spec.ts', 'the queue-mode scheduler choice');

const CONFIG = scriptedConfig({
  system: 'step-scheduler',
  models: {
    plain: [answer('hello')],
  },
  agents: {
    greeter: { model: 'plain' },
  },
});

/** Records which scheduler calls the runtime made, then lets the local scheduler do the work. */
class RecordingScheduler implements StepScheduler {
  readonly calls: string[] = [];
  constructor(private readonly inner: StepScheduler) {}
  begin(...args: Parameters<StepScheduler['begin']>): void {
    this.calls.push('begin');
    this.inner.begin(...args);
  }
  goOn(...args: Parameters<StepScheduler['goOn']>): Promise<void> {
    this.calls.push('goOn');
    return this.inner.goOn(...args);
  }
  goOnAfter(...args: Parameters<StepScheduler['goOnAfter']>): Promise<void> {
    this.calls.push('goOnAfter');
    return this.inner.goOnAfter(...args);
  }
  adopt(operationId: string, host: StepHost): Promise<void> {
    this.calls.push('adopt');
    return this.inner.adopt(operationId, host);
  }
}

describe('DESIGN §4: local and queue step driving behind one StepScheduler port', () => {
  let app: RuntimeApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('local mode: the runtime schedules through the local scheduler, which runs the operation here', async () => {
    app = await bootRuntime({ config: CONFIG });
    expect(app.moduleRef.get(STEP_SCHEDULER)).toBeInstanceOf(LocalStepScheduler);
    const result = await app.runtime.run('hi', { agentId: 'greeter' });
    expect(result.reason).toBe('done');
  });

  it('operations are started and adopted only through the port', async () => {
    app = await bootRuntime({ config: CONFIG });
    const recording = new RecordingScheduler(app.moduleRef.get(LocalStepScheduler));
    // `OperationStart` holds the port it was built with; a replaced provider shows every call it makes.
    const starts = app.moduleRef.get(OperationStart);
    (starts as unknown as { scheduler: StepScheduler }).scheduler = recording;
    const { operationId, done } = await app.runtime.execAgent({ agentId: 'greeter', prompt: 'hi' });
    expect((await done).reason).toBe('done');
    await starts.adopt(operationId);
    expect(recording.calls).toEqual(['begin', 'adopt']);
  });
});

describePostgres('DESIGN §4: queue mode swaps the scheduler', () => {
  const schema = uniqueSchemaName();
  afterAll(() => dropSchema(schema));

  it('queue mode: the scheduler is the queued one (resolved without touching Redis)', async () => {
    const app = await bootRuntime({ config: CONFIG, database: postgresDatabaseOption(schema), module: { mode: 'queue', redis: 'redis://127.0.0.1:1', queue: { worker: false } } });
    try {
      expect(app.moduleRef.get(STEP_SCHEDULER)).toBeInstanceOf(QueuedStepScheduler);
    } finally {
      await app.close();
    }
  });
});
