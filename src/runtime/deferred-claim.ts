/**
 * One decider at a time for a deferred result (G5): before a result's after-chain runs, its empty
 * placeholder is claimed in the database for this call, so a concurrent duplicate — in this process or
 * another on the same database — is turned away instead of calling the caller's policy again. The claim
 * is renewed while the chain runs and lapses on its own if this process dies mid-chain.
 */
import type { RuntimeStore } from './runtime-store.port.js';

/** How long a claim lasts without renewal: how long a crashed decider can block a retried result. */
export const DEFERRED_CLAIM_HOLD_MS = 30_000;
const RENEW_EVERY_MS = DEFERRED_CLAIM_HOLD_MS / 3;

export class DeferredClaim {
  private readonly renewal: NodeJS.Timeout;

  private constructor(
    private readonly store: RuntimeStore,
    private readonly operationId: string,
    private readonly toolCallId: string,
    readonly claimant: string,
  ) {
    // Claiming again as the same claimant extends it; a failed renewal leaves the claim to lapse.
    this.renewal = setInterval(() => void store.claimDeferred(operationId, toolCallId, claimant, DEFERRED_CLAIM_HOLD_MS).catch(() => undefined), RENEW_EVERY_MS);
    this.renewal.unref();
  }

  /** The claim for `claimant`, or null while another decider holds the placeholder or once it is final. */
  static async take(store: RuntimeStore, operationId: string, toolCallId: string, claimant: string): Promise<DeferredClaim | null> {
    if (!(await store.claimDeferred(operationId, toolCallId, claimant, DEFERRED_CLAIM_HOLD_MS))) return null;
    return new DeferredClaim(store, operationId, toolCallId, claimant);
  }

  /** Stops renewing; unless the result was published (which clears the claim), frees the placeholder for another result. */
  async end(published: boolean): Promise<void> {
    clearInterval(this.renewal);
    if (published) return;
    // A release that fails only delays the next result until the claim lapses.
    await this.store.releaseDeferred(this.operationId, this.toolCallId, this.claimant).catch(() => undefined);
  }
}
