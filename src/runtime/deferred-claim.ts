/**
 * One decider at a time for a deferred result (G5): before a result's after-chain runs, its empty
 * placeholder is claimed in the database for this call, so a concurrent duplicate — in this process or
 * another on the same database — is turned away instead of calling the caller's policy again. The claim
 * is renewed while the chain runs and lapses on its own if this process dies mid-chain. The claim stores the
 * result it decides (SPEC G3): once a dead decider's claim lapsed, a reconciler takes the stored result over
 * (`held`) and finishes the chain, so nobody has to post it again.
 */
import type { ToolResult } from '../hooks/agent-events.js';
import type { RuntimeStore } from './runtime-store.port.js';

/** How long a claim lasts without renewal unless the caller says: how long a crashed decider blocks the call. */
export const DEFERRED_CLAIM_HOLD_MS = 30_000;

/** The longest wait before a received result whose finishing keeps failing is tried again. */
export const MAX_DEFERRED_RETRY_DELAY_MS = 10 * 60_000;

/**
 * How long a received result whose finishing failed waits before the next try: as long as it has waited
 * already (so the tries back off exponentially — a database or policy outage is not hammered once per
 * lease), at least one lease and at most `MAX_DEFERRED_RETRY_DELAY_MS`. It is never dropped (G3: nobody has
 * to post it again), so there is no attempt cap, only the growing wait.
 */
export function deferredRetryDelayMs(receivedAt: string, leaseMs: number, now = Date.now()): number {
  const waited = now - Date.parse(receivedAt);
  return Math.min(MAX_DEFERRED_RETRY_DELAY_MS, Math.max(leaseMs, Number.isFinite(waited) ? waited : leaseMs));
}

export class DeferredClaim {
  private readonly renewal: NodeJS.Timeout;

  private constructor(
    private readonly store: RuntimeStore,
    private readonly operationId: string,
    private readonly toolCallId: string,
    readonly claimant: string,
    holdMs: number,
  ) {
    // Claiming again as the same claimant extends it; a failed renewal leaves the claim to lapse.
    this.renewal = setInterval(() => void store.claimDeferred(operationId, toolCallId, claimant, holdMs).catch(() => undefined), holdMs / 3);
    this.renewal.unref();
  }

  /**
   * The claim for `claimant`, storing `received` (the result to decide) with it; null while another decider
   * holds the placeholder, while a received result waits for a reconciler, or once it is final.
   */
  static async take(
    store: RuntimeStore,
    operationId: string,
    toolCallId: string,
    claimant: string,
    options: { received?: ToolResult; holdMs?: number } = {},
  ): Promise<DeferredClaim | null> {
    const holdMs = options.holdMs ?? DEFERRED_CLAIM_HOLD_MS;
    if (!(await store.claimDeferred(operationId, toolCallId, claimant, holdMs, options.received))) return null;
    return new DeferredClaim(store, operationId, toolCallId, claimant, holdMs);
  }

  /** A claim `claimant` already holds (a reconciler took a received result over): renewed from now on. */
  static held(store: RuntimeStore, operationId: string, toolCallId: string, claimant: string, holdMs: number): DeferredClaim {
    return new DeferredClaim(store, operationId, toolCallId, claimant, holdMs);
  }

  /**
   * Stops renewing. Unless the result was published (which clears the claim), frees the placeholder for
   * another result, the received result dropped — or, with `retryAfterMs`, keeps both and holds the claim
   * that long, so a reconciler tries the stored result again only then.
   */
  async end(published: boolean, options: { retryAfterMs?: number } = {}): Promise<void> {
    clearInterval(this.renewal);
    if (published) return;
    if (options.retryAfterMs !== undefined) {
      // Claiming again as the same claimant sets the hold; if that fails the claim lapses one hold from now.
      await this.store.claimDeferred(this.operationId, this.toolCallId, this.claimant, options.retryAfterMs).catch(() => undefined);
      return;
    }
    // A release that fails only delays the next result until the claim lapses (a reconciler then finishes it).
    await this.store.releaseDeferred(this.operationId, this.toolCallId, this.claimant).catch(() => undefined);
  }
}
