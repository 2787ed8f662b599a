import { Injectable } from '@nestjs/common';

/** Lets callers wait until every decorator hook is bound; a binding failure rejects. */
@Injectable()
export class HookReadinessWatcher {
  private resolveReady!: () => void;
  private rejectReady!: (error: unknown) => void;
  private readonly ready = new Promise<void>((resolve, reject) => {
    this.resolveReady = resolve;
    this.rejectReady = reject;
  });

  constructor() {
    // A rejection nobody awaits must not crash the process; awaiting callers still see it.
    this.ready.catch(() => undefined);
  }

  waitUntilReady(): Promise<void> {
    return this.ready;
  }

  setReady(): void {
    this.resolveReady();
  }

  setErrored(error: unknown): void {
    this.rejectReady(error);
  }
}
