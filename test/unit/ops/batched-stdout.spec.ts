/**
 * The server log's destination: lines logged close together share one write, in order; an explicit
 * flush and the process's exit write what is buffered at once (nothing is lost at `process.exit`).
 */
import { batchedStdout } from '../../../src/server/ops/batched-stdout.js';
import { eventually } from '../../support/eventually.js';

function target() {
  const writes: string[] = [];
  return { writes, stream: { write: (chunk: string) => void writes.push(chunk) } };
}

describe('batchedStdout', () => {
  it('writes the lines logged together in one write, in order, soon after', async () => {
    const { writes, stream } = target();
    const destination = batchedStdout(stream);
    destination.write('{"n":1}\n');
    destination.write('{"n":2}\n');
    expect(writes).toEqual([]);
    await eventually(() => writes.length > 0, 'the batch to be written');
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n']);
  });

  it('flushSync writes at once; the exit listener is there only while lines wait', () => {
    const { writes, stream } = target();
    const destination = batchedStdout(stream);
    const listening = process.listenerCount('exit');
    destination.write('{"n":1}\n');
    expect(process.listenerCount('exit')).toBe(listening + 1);
    // What the process's exit would run (only ours: other listeners belong to the test runner).
    (process.listeners('exit').at(-1) as () => void)();
    expect(writes).toEqual(['{"n":1}\n']);
    expect(process.listenerCount('exit')).toBe(listening);
    destination.write('{"n":2}\n');
    destination.flushSync();
    expect(writes).toEqual(['{"n":1}\n', '{"n":2}\n']);
  });
});
