/**
 * SPEC K5 for one model call: what goes out as deltas, so that the deltas of a call concatenate to its
 * published content. Each attempt (K4) gets its own `onDelta` (`attempt()`); an attempt's text is sent only
 * where it runs past what was sent already, so a retry that writes the same words again repeats nothing, and
 * an attempt superseded by the next (a timed-out one still writing) sends nothing more. `finish(content)`
 * runs after the decision (K3): whatever of the published content was not sent yet goes out in one delta —
 * all of it for a held answer (an output guard applied), a mock, or a provider that does not stream. The one
 * case the concatenation cannot hold: a retry that writes something else than the failed attempt had sent;
 * nothing more is sent then, and the committed message is the text.
 */
export class CallDeltas {
  private sent = '';
  private diverged = false;
  private closed = false;
  private current: { text: string; synced: boolean; onDelta?: (text: string) => void } | undefined;

  constructor(private readonly send: (text: string) => void) {}

  /** The `onDelta` of the next attempt; the previous attempt's stops counting. */
  attempt(): (text: string) => void {
    const state: { text: string; synced: boolean; onDelta?: (text: string) => void } = { text: '', synced: this.sent === '' };
    this.current = state;
    const onDelta = (piece: string) => {
      if (this.closed || this.diverged || this.current !== state || typeof piece !== 'string' || piece === '') return;
      state.text += piece;
      if (state.synced) {
        // The usual case: the attempt is the one being sent; no comparison needed.
        this.sent = state.text;
        this.send(piece);
        return;
      }
      state.synced = this.advance(state.text);
    };
    state.onDelta = onDelta;
    return onDelta;
  }

  /** An attempt that failed or timed out (its signal aborted) sends nothing more, even if it goes on writing. */
  retire(onDelta: (text: string) => void): void {
    if (this.current?.onDelta === onDelta) this.current = undefined;
  }

  /** The call failed: nothing more is sent (the run ends or retries the step; the message decides). */
  close(): void {
    this.closed = true;
  }

  /** After the decision: the part of the published content not sent yet, in one delta; nothing after it. */
  finish(content: string): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.diverged) this.advance(content);
  }

  /** Sends what `text` adds to what was sent; true once both are the same text. */
  private advance(text: string): boolean {
    if (text.length <= this.sent.length) {
      if (!this.sent.startsWith(text)) this.diverged = true;
      return !this.diverged && text.length === this.sent.length;
    }
    if (!text.startsWith(this.sent)) {
      this.diverged = true;
      return false;
    }
    const fresh = text.slice(this.sent.length);
    this.sent = text;
    this.send(fresh);
    return true;
  }
}
