/**
 * Recovery timings of the one durable engine (SPEC G2, DESIGN §4), in every mode. Whoever drives a step
 * holds the operation's lease for `leaseMs` and renews it every third of that; every process with the
 * runtime reconciles at start and every `reconcileEveryMs`; waiting on an operation is event-driven, and
 * `recheckMs` is only the backstop that re-reads what is watched. With the defaults an operation whose
 * process died is taken over within 15 s. `queue.leaseMs` / `queue.reconcileEveryMs` (v0.1) still apply
 * when `recovery` does not set them.
 */
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';

export interface RecoverySettings {
  leaseMs: number;
  reconcileEveryMs: number;
  recheckMs: number;
}

export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_RECONCILE_EVERY_MS = 5_000;
export const DEFAULT_RECHECK_MS = 10_000;

export function recoverySettings(options: AgentHooksModuleOptions): RecoverySettings {
  const recovery = options.recovery ?? {};
  return {
    leaseMs: positive(recovery.leaseMs ?? options.queue?.leaseMs, DEFAULT_LEASE_MS, 'recovery.leaseMs'),
    reconcileEveryMs: positive(recovery.reconcileEveryMs ?? options.queue?.reconcileEveryMs, DEFAULT_RECONCILE_EVERY_MS, 'recovery.reconcileEveryMs'),
    recheckMs: positive(recovery.recheckMs, DEFAULT_RECHECK_MS, 'recovery.recheckMs'),
  };
}

export const RECOVERY_SETTINGS = Symbol('nest-agent-hooks:RecoverySettings');

function positive(value: number | undefined, fallback: number, key: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${key} must be a positive number of milliseconds`);
  return value;
}
