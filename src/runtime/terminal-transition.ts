/**
 * The terminal transition, exactly once per operation (DESIGN §3): the compare-and-set that completes the
 * operation, then its terminal sequence — `done` → `onComplete` → `on_run_end`; otherwise `onError`
 * (reason `error` only) → `onComplete` → `on_run_error` (`TerminalSequence`, terminal-sequence.ts) — run
 * only by the process that made the transition, holding it meanwhile so a reconciler takes it over if
 * that process dies (G2); then `done` settles and the sub-agent bridge reports to a parent (P5).
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { TerminalReason } from '../hooks/agent-events.js';
import { errorType } from '../hooks/hook-errors.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { claimantId } from './claimant-ids.js';
import { terminalFailure } from './error-summary.js';
import { LeaseHolder } from './lease-holder.js';
import type { LiveOperation } from './live-operation.js';
import { LiveOperations } from './live-operations.js';
import { emptyResult, resultFrom, resultOf } from './operation-result.js';
import { RECOVERY_SETTINGS, type RecoverySettings } from './recovery-settings.js';
import { RUNTIME_STORE, type RuntimeStore } from './runtime-store.port.js';
import { TerminalSequence, type CompletedState, type ParentReport } from './terminal-sequence.js';

@Injectable()
export class TerminalTransition {
  private readonly logger = new Logger('AgentRuntime');

  constructor(
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    private readonly leases: LeaseHolder,
    @Inject(RECOVERY_SETTINGS) private readonly recovery: RecoverySettings,
    private readonly live: LiveOperations,
    private readonly terminal: TerminalSequence,
    private readonly tracer: AgentTracer,
  ) {}

  /** Who holds a terminal sequence this process is about to run. */
  holder(): string {
    return claimantId(this.leases.instanceId, 'terminal');
  }

  /** Holds the terminal sequence for `holder` from now on, renewing it until the returned stop is called. */
  hold(operationId: string, holder: string): () => void {
    return this.leases.holdTerminal(operationId, holder);
  }

  /**
   * The terminal transition and sequence. `leaseOwner`: a step's own end, made only while this process still
   * holds the lease — if another process took the operation over meanwhile (this one's renewals failed), the
   * operation is theirs to end: this process lets go and watches (G2). `report`: the sub-agent bridge to a
   * parent (P5).
   */
  finish(operationId: string, live: LiveOperation, reason: TerminalReason, report: ParentReport, leaseOwner?: string): Promise<void> {
    // The terminal sequence belongs to the operation's trace (O3), wherever and whenever it runs.
    return this.tracer.segment(live.trace, () => this.end(operationId, live, reason, report, leaseOwner));
  }

  /**
   * After the terminal transition: the terminal sequence (only by `holder`, the one that made the
   * transition, renewing its hold meanwhile — from `holding` if the caller started that already), then
   * `done` settles and what follows it runs. `nothingOwed`: the transition was made with
   * `TerminalHold.nothingOwed`, so an operation without a parent has its sequence recorded done already.
   */
  async afterTransition(
    operationId: string,
    live: LiveOperation,
    reason: TerminalReason,
    error: unknown,
    holder: string | undefined,
    report: ParentReport,
    holding?: () => void,
    nothingOwed = false,
  ): Promise<void> {
    live.beginFinishing();
    // Completed by `holder`: read once for the hooks and the result both, not once each.
    const read = holder !== undefined ? await this.completedState(operationId) : undefined;
    // As the transition's CASE decided: recorded unless the operation has a parent (or was not read).
    const recorded = nothingOwed && !!read?.operation && read.operation.parentOperationId === undefined;
    const stopHolding = holding ?? (holder !== undefined && !recorded ? this.hold(operationId, holder) : () => undefined);
    try {
      if (holder !== undefined) await this.terminal.hooks(operationId, live, reason, error, read);
    } catch (failure) {
      this.logger.error(`terminal sequence of ${operationId} failed (${errorType(failure)})`);
    }
    try {
      const stored = read ? read.operation : await this.store.getOperation(operationId).catch(() => null);
      const result = read
        ? resultFrom(operationId, read.operation, read.messages, stored?.reason ?? reason)
        : await resultOf(this.store, operationId, stored?.reason ?? reason).catch(() => emptyResult(operationId, reason));
      this.live.release(operationId, live, result);
      if (holder !== undefined && stored) await this.terminal.after(stored, result, report, recorded);
    } finally {
      stopHolding();
    }
  }

  private async end(operationId: string, live: LiveOperation, reason: TerminalReason, report: ParentReport, leaseOwner?: string): Promise<void> {
    live.beginFinishing();
    const error = live.error;
    const holder = this.holder();
    // Nobody here observes the terminal points: nothing a crash could lose, so nothing is held (E3).
    const nothingOwed = !this.terminal.observed(operationId, live.runContext);
    let first = false;
    try {
      const failure = terminalFailure(error, live.limit); // S3: never the error's message; F4: the limit reached
      // This process holds the terminal sequence while it runs; if it dies, a reconciler takes it over (G2).
      first = await this.store.complete(operationId, reason, failure, {
        owner: holder,
        ms: this.recovery.leaseMs,
        ...(leaseOwner !== undefined ? { leaseOwner } : {}),
        ...(nothingOwed ? { nothingOwed } : {}),
      });
      if (first && failure && error !== undefined) this.logger.error(`operation ${operationId} failed: ${failure.type}: ${failure.summary}`);
    } catch (failure) {
      // Nothing was completed: `done` must not settle on a state the database does not have. The lease lapses
      // and a reconciler (here or elsewhere) drives the operation again.
      this.logger.error(`terminal transition of ${operationId} failed (${errorType(failure)})`);
      this.letGo(operationId, live);
      return;
    }
    if (!first && leaseOwner !== undefined && (await this.store.getOperation(operationId).catch(() => null))?.status !== 'completed') {
      this.letGo(operationId, live);
      return;
    }
    await this.afterTransition(operationId, live, reason, error, first ? holder : undefined, report, undefined, first && nothingOwed);
  }

  /** The operation goes on without this process (its lease moved, or its end could not be written): watch it. */
  private letGo(operationId: string, live: LiveOperation): void {
    live.letGo();
    this.live.watch(operationId, live);
  }

  /** A completed operation and its conversation; undefined when they could not be read (each step then reads its own). */
  private completedState(operationId: string): Promise<CompletedState | undefined> {
    return this.store.completedState(operationId).catch(() => undefined);
  }
}
