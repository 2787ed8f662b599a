/**
 * SPEC K5, one call's deltas (`CallDeltas`): the deltas concatenate to the published content whether the
 * provider streams, answers whole, is retried, or a held answer is decided; a superseded attempt sends
 * nothing more; nothing is sent after `finish`. And K6: publishing to an operation nobody watches builds nothing.
 */
import { CallDeltas } from '../../../src/runtime/streaming/call-deltas.js';
import { LocalOperationDeltas } from '../../../src/runtime/streaming/local-operation-deltas.js';

function sent() {
  const pieces: string[] = [];
  return { pieces, deltas: new CallDeltas((text) => pieces.push(text)) };
}

describe('K5: the deltas of one call', () => {
  it('K5: a streaming attempt is passed on piece by piece; finish with the same content adds nothing', () => {
    const { pieces, deltas } = sent();
    const onDelta = deltas.attempt();
    onDelta('Hel');
    onDelta('lo');
    deltas.finish('Hello');
    expect(pieces).toEqual(['Hel', 'lo']);
  });

  it('K5: a held answer (or one that did not stream) goes out whole in one delta at finish; an empty one sends nothing', () => {
    const { pieces, deltas } = sent();
    deltas.finish('decided content');
    expect(pieces).toEqual(['decided content']);
    const empty = sent();
    empty.deltas.finish('');
    expect(empty.pieces).toEqual([]);
  });

  it('K5/K4: a retry that writes the same words again repeats nothing, and goes on from where the first attempt stopped', () => {
    const { pieces, deltas } = sent();
    const first = deltas.attempt();
    first('The ans');
    const second = deltas.attempt();
    second('The');
    second(' answer');
    second(' is 42');
    deltas.finish('The answer is 42');
    expect(pieces).toEqual(['The ans', 'wer', ' is 42']);
    expect(pieces.join('')).toBe('The answer is 42');
  });

  it('K5: a superseded attempt (one still writing past its deadline) and anything after finish send nothing', () => {
    const { pieces, deltas } = sent();
    const first = deltas.attempt();
    const second = deltas.attempt();
    first('late words');
    second('Hi');
    deltas.finish('Hi');
    second(' again');
    expect(pieces).toEqual(['Hi']);
  });

  it('K5: a retry that writes something else stops the stream (the committed message is the text)', () => {
    const { pieces, deltas } = sent();
    deltas.attempt()('Yes');
    const retry = deltas.attempt();
    retry('No, ');
    retry('never');
    deltas.finish('No, never');
    expect(pieces).toEqual(['Yes']);
  });

  it('K6: publishing to an operation nobody watches creates nothing; the last watcher leaving forgets it', () => {
    const local = new LocalOperationDeltas();
    local.publish('op', { stepIndex: 0, text: 'x' });
    expect(local.isWatched('op')).toBe(false);
    const seen: string[] = [];
    const a = local.of('op').subscribe((d) => seen.push(`a:${d.text}`));
    const b = local.of('op').subscribe((d) => seen.push(`b:${d.text}`));
    local.publish('op', { stepIndex: 0, text: 'y' });
    a.unsubscribe();
    expect(local.isWatched('op')).toBe(true);
    b.unsubscribe();
    expect(local.isWatched('op')).toBe(false);
    expect(seen).toEqual(['a:y', 'b:y']);
  });
});
