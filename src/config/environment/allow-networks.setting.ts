/** `AGENT_HOOKS_WEBHOOK_ALLOW_NETWORKS`: comma-separated CIDRs the SSRF guard lets webhooks reach. */
import { ALLOW_NETWORKS_ENV, allowNetworksProblem } from '../../webhooks/ssrf-guard.js';
import type { EnvironmentSetting } from './environment-setting.js';

export const allowNetworksSetting: EnvironmentSetting = {
  variable: ALLOW_NETWORKS_ENV,
  problem: (value) =>
    allowNetworksProblem(
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    ),
};
