/** The live state of one operation in this process (DESIGN §4: who ends it, who drives it), one phase at a time. */
import { describe, expect, it } from '@jest/globals';
import { RunContext } from '../../../src/hooks/contexts.js';
import { LiveOperation } from '../../../src/runtime/live-operation.js';
import { emptyResult } from '../../../src/runtime/operation-result.js';

const live = () => new LiveOperation(new RunContext({ runId: 'op-1' }));

describe('LiveOperation phases', () => {
  it('idle → driving → idle: a pause ends the loop, a completion event is news again', () => {
    const operation = live();
    expect(operation.phase).toBe('idle');
    operation.beginDriving();
    expect(operation.phase).toBe('driving');
    expect(operation.endsHere).toBe(false);
    operation.endDriving();
    expect(operation.phase).toBe('idle');
    expect(operation.stepLoopHere).toBe(false);
  });

  it('G2: the loop that reaches the terminal sequence stays on the operation while it finishes', () => {
    const operation = live();
    operation.beginDriving();
    operation.beginFinishing();
    expect(operation.phase).toBe('finishing');
    expect(operation.stepLoopHere).toBe(true);
    expect(operation.endsHere).toBe(true);
  });

  it('G3: a stop whose commit was refused is no longer this process to end; letting go forgets the loop and the error', () => {
    const operation = live();
    operation.beginDriving();
    operation.beginFinishing();
    operation.cancelFinishing();
    expect(operation.phase).toBe('driving');
    operation.error = new Error('step failed');
    operation.beginFinishing();
    operation.letGo();
    expect(operation.phase).toBe('idle');
    expect(operation.error).toBeUndefined();
  });

  it('a resume asked for while the loop returns from its pause is taken once', () => {
    const operation = live();
    expect(operation.takeResumeRequest()).toBe(false);
    operation.requestResume();
    expect(operation.takeResumeRequest()).toBe(true);
    expect(operation.takeResumeRequest()).toBe(false);
  });

  it('one watcher at a time', () => {
    const operation = live();
    expect(operation.startWatching()).toBe(true);
    expect(operation.startWatching()).toBe(false);
    operation.stopWatching();
    expect(operation.startWatching()).toBe(true);
  });

  it('A4: `done` settles once; a later settle, abandon or finish changes nothing', async () => {
    const operation = live();
    operation.settle(emptyResult('op-1', 'done'));
    operation.abandon(new Error('closing'));
    operation.beginFinishing();
    operation.cancelFinishing();
    expect(operation.phase).toBe('settled');
    await expect(operation.done).resolves.toMatchObject({ operationId: 'op-1', reason: 'done' });
  });

  it('G4: abandoned at shutdown, `done` rejects, and nobody awaiting it is no unhandled rejection', async () => {
    const operation = live();
    operation.abandon(new Error('closing'));
    expect(operation.phase).toBe('settled');
    await expect(operation.done).rejects.toThrow('closing');
  });
});
