/**
 * Holding an operation's lease while working on it (SPEC G2): taken before a step, renewed every third of
 * `leaseMs` while the work lasts, and `lost` aborts when a renewal finds another holder — the work stops,
 * and its commits would be refused anyway (fenced by the owner id). One timer per lease actually held: an
 * operation that waits holds none.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { OPERATION_LEASES, type OperationLeases, type ReleasedOperation } from './operation-leases.port.js';
import type { NewOperationLease, StoredOperation } from './runtime-store.port.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';

export class HeldLease {
  private readonly lostController = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly leases: OperationLeases,
    readonly operationId: string,
    /** Unique per holding: `commit({ leaseOwner })` fences the step's writes with it. */
    readonly owner: string,
    ttlMs: number,
    /** The operation as the lease's statement found it: what the work under the lease begins from, unread. */
    readonly operation: StoredOperation,
  ) {
    this.timer = setInterval(() => {
      void leases.renew(operationId, owner, ttlMs).then(
        // A renewal answered after `stop` (the lease was let go meanwhile, e.g. with a commit) says nothing.
        (held) => (held || this.stopped ? undefined : this.lostController.abort(new LeaseLostError(operationId))),
        () => undefined, // a failed renewal is retried at the next tick; the lease lapses if they all fail
      );
    }, Math.max(100, Math.floor(ttlMs / 3)));
    this.timer.unref();
  }

  /** Aborted once another process holds the lease. */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /**
   * The work ended (waiting, or a step handed to the queue): the lease is free at once. Answers the
   * operation's version and status as it was let go (null: the lease had moved on, or the release failed).
   */
  async release(): Promise<ReleasedOperation | null> {
    this.stop();
    return this.leases.release(this.operationId, this.owner).catch(() => null);
  }

  /** Shutdown (G4): free for the next reconcile pass of any process. */
  async handBack(): Promise<void> {
    this.stop();
    await this.leases.handBack(this.operationId, this.owner).catch(() => false);
  }

  /** Stops renewing without touching the row (the terminal transition took the lease over, or a commit let it go). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';

  constructor(operationId: string) {
    super(`the lease of operation ${operationId} moved to another process`);
  }
}

@Injectable()
export class LeaseHolder {
  /** This process, in the owner ids of the leases it takes. */
  readonly instanceId = `${process.pid}:${randomUUID()}`;

  constructor(
    @Inject(OPERATION_LEASES) private readonly leases: OperationLeases,
    @Inject(RECOVERY_SETTINGS) private readonly settings: RecoverySettings,
  ) {}

  /**
   * The operation's lease for this holder, or null while another process holds it (or it is completed).
   * `stepFollows: false` when other work (a slow notification) comes before the step (`OperationLeases.acquire`).
   */
  async hold(operationId: string, { stepFollows = true }: { stepFollows?: boolean } = {}): Promise<HeldLease | null> {
    const owner = this.newOwner();
    const operation = await this.leases.acquire(operationId, owner, this.settings.leaseMs, stepFollows);
    if (!operation) return null;
    return new HeldLease(this.leases, operationId, owner, this.settings.leaseMs, operation);
  }

  /** An owner id for one holding (unique per holding: commits are fenced by it). */
  newOwner(): string {
    return `${this.instanceId}:${randomUUID()}`;
  }

  /** The lease of an operation this process created with it (`NewOperation.lease`): renewed from now on. */
  heldSinceCreate(operation: StoredOperation, owner: string): HeldLease {
    return new HeldLease(this.leases, operation.id, owner, this.settings.leaseMs, operation);
  }

  /** What a new operation is created with when this process drives it at once. */
  leaseAtCreate(): NewOperationLease {
    return { owner: this.newOwner(), ttlMs: this.settings.leaseMs };
  }

  /** Keeps `owner`'s hold on a completed operation's terminal sequence while it runs; stop the returned timer after. */
  holdTerminal(operationId: string, owner: string): () => void {
    const timer = setInterval(
      () => void this.leases.renewTerminalHold(operationId, owner, this.settings.leaseMs).catch(() => false),
      Math.max(100, Math.floor(this.settings.leaseMs / 3)),
    );
    timer.unref();
    return () => clearInterval(timer);
  }
}
