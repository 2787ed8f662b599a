/**
 * Recovery timings of the one durable engine (SPEC G2, DESIGN §4), in every mode. Whoever drives a step
 * holds the operation's lease for `leaseMs` and renews it every third of that; every process with the
 * runtime reconciles at start and every `reconcileEveryMs`; waiting on an operation is event-driven, and
 * `recheckMs` is only the backstop that re-reads what is watched. With the defaults an operation whose
 * process died is taken over within 15 s. `queue.leaseMs` / `queue.reconcileEveryMs` (v0.1) still apply
 * when `recovery` does not set them, then `AGENT_HOOKS_LEASE_MS`, `AGENT_HOOKS_RECONCILE_EVERY_MS`,
 * `AGENT_HOOKS_RECHECK_MS`.
 */
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { EnvironmentSettingError } from '../common/environment-setting-error.js';

export interface RecoverySettings {
  leaseMs: number;
  reconcileEveryMs: number;
  recheckMs: number;
}

export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_RECONCILE_EVERY_MS = 5_000;
export const DEFAULT_RECHECK_MS = 10_000;

/** The environment's say when the module options are silent (`agentctl serve` / `worker` have no flags for them). */
export const RECOVERY_ENV = {
  leaseMs: 'AGENT_HOOKS_LEASE_MS',
  reconcileEveryMs: 'AGENT_HOOKS_RECONCILE_EVERY_MS',
  recheckMs: 'AGENT_HOOKS_RECHECK_MS',
} as const;

export function recoverySettings(options: AgentHooksModuleOptions, env: NodeJS.ProcessEnv = process.env): RecoverySettings {
  const recovery = options.recovery ?? {};
  const fromEnv = (key: keyof typeof RECOVERY_ENV): number | undefined => {
    const raw = env[RECOVERY_ENV[key]];
    if (raw === undefined || raw === '') return undefined;
    // G7: a malformed setting stops the start, naming the variable (never echoing the value).
    if (!/^\d{1,9}$/.test(raw.trim()) || Number(raw) <= 0) {
      throw new EnvironmentSettingError([{ variable: RECOVERY_ENV[key], problem: 'must be a positive whole number of milliseconds' }]);
    }
    return Number(raw);
  };
  return {
    leaseMs: positive(recovery.leaseMs ?? options.queue?.leaseMs ?? fromEnv('leaseMs'), DEFAULT_LEASE_MS, 'recovery.leaseMs'),
    reconcileEveryMs: positive(recovery.reconcileEveryMs ?? options.queue?.reconcileEveryMs ?? fromEnv('reconcileEveryMs'), DEFAULT_RECONCILE_EVERY_MS, 'recovery.reconcileEveryMs'),
    recheckMs: positive(recovery.recheckMs ?? fromEnv('recheckMs'), DEFAULT_RECHECK_MS, 'recovery.recheckMs'),
  };
}

export const RECOVERY_SETTINGS = Symbol('nest-agent-hooks:RecoverySettings');

function positive(value: number | undefined, fallback: number, key: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${key} must be a positive number of milliseconds`);
  return value;
}
