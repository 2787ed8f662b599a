/** SPEC G2 timings and G7 for their environment variables. */
import { describe, expect, it } from '@jest/globals';
import { EnvironmentSettingError } from '../../../src/common/environment-setting-error.js';
import { recoverySettings } from '../../../src/runtime/recovery-settings.js';

describe('recovery settings', () => {
  it('G2: the defaults take a dead process over within 15 s (lease 10 s, a pass every 5 s), backstop 10 s', () => {
    expect(recoverySettings({}, {})).toEqual({ leaseMs: 10_000, reconcileEveryMs: 5_000, recheckMs: 10_000 });
  });

  it('G2: module options win over v0.1 queue options, which win over the environment', () => {
    const env = { AGENT_HOOKS_LEASE_MS: '3000', AGENT_HOOKS_RECONCILE_EVERY_MS: '1000', AGENT_HOOKS_RECHECK_MS: '2000' };
    expect(recoverySettings({}, env)).toEqual({ leaseMs: 3_000, reconcileEveryMs: 1_000, recheckMs: 2_000 });
    expect(recoverySettings({ queue: { leaseMs: 4_000 } }, env).leaseMs).toBe(4_000);
    expect(recoverySettings({ recovery: { leaseMs: 5_000 }, queue: { leaseMs: 4_000 } }, env).leaseMs).toBe(5_000);
  });

  it('G7: a malformed variable stops the start, naming the variable and never echoing the value', () => {
    const attempt = () => recoverySettings({}, { AGENT_HOOKS_LEASE_MS: 'soon-secret-ish' });
    expect(attempt).toThrow(EnvironmentSettingError);
    expect(attempt).toThrow(/AGENT_HOOKS_LEASE_MS/);
    expect(() => recoverySettings({}, { AGENT_HOOKS_RECHECK_MS: '0' })).toThrow(/AGENT_HOOKS_RECHECK_MS/);
    try {
      attempt();
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('soon-secret-ish');
    }
  });

  it('G2: a non-positive module option is refused', () => {
    expect(() => recoverySettings({ recovery: { leaseMs: -1 } }, {})).toThrow(/recovery.leaseMs/);
  });
});
