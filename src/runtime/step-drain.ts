/**
 * SPEC G4 for the runtime's own work, driven by the `ShutdownCoordinator`: once the app
 * starts closing (`stopTaking`), no new operation, decision, step or owed work is taken and `stopping`
 * aborts (the steps in flight end at their next boundary); `drain` waits for the work in flight and, at the
 * end of the grace period, aborts `cut` (the tool call still running is abandoned without a result and its
 * step handed back).
 */
import { Injectable } from '@nestjs/common';
import { RuntimeShuttingDownError } from './runtime-errors.js';

@Injectable()
export class StepDrain {
  private closing = false;
  private readonly stoppingController = new AbortController();
  private readonly cutController = new AbortController();
  /** Work in progress here that must end before the clients close: step loops, queued steps, owed sequences. */
  private readonly inFlight = new Set<Promise<void>>();

  /** The app is closing: nothing new is taken here. */
  get stopped(): boolean {
    return this.closing;
  }

  /** Aborts when the app starts closing: no new step or call begins; the one in flight goes on. */
  get stopping(): AbortSignal {
    return this.stoppingController.signal;
  }

  /** Aborts at the end of the grace period: the call in flight is abandoned and its step handed back. */
  get cut(): AbortSignal {
    return this.cutController.signal;
  }

  /** G4 step 1. */
  stopTaking(): void {
    this.closing = true;
    this.stoppingController.abort(new RuntimeShuttingDownError());
  }

  /** Work the drain waits for; its failure is handled by the work itself. */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
  }

  /** G4 step 2: waits for the work in flight, cutting it after `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.stopTaking();
    const deadline = setTimeout(() => this.cutController.abort(new RuntimeShuttingDownError()), graceMs);
    deadline.unref();
    try {
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    } finally {
      clearTimeout(deadline);
    }
  }
}
