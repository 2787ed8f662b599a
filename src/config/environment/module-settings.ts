/**
 * What the library module reads from the environment or its options for webhooks and queues, checked once
 * at start (SPEC G7): the signing secret, the SSRF allow-list, the app URL, QStash, the Redis URL. A module
 * option replaces its variable, so only the one in effect is checked. The values are still read where they
 * are used (S2); environment hooks (`AGENT_HOOK_WEBHOOK_*`) are read per dispatch and are not checked here.
 */
import type { AgentHooksModuleOptions } from '../../agent-hooks.options.js';
import { QueueConfigurationError, redisConnection } from '../../queue/queue-connection.js';
import { allowNetworksProblem } from '../../webhooks/ssrf-guard.js';
import { APP_URL_ENV } from '../../webhooks/webhook-url.js';
import { allowNetworksSetting } from './allow-networks.setting.js';
import type { SettingProblem } from '../../common/environment-setting-error.js';
import { environmentProblems, type EnvironmentSetting } from './environment-setting.js';
import { httpUrlProblem, httpUrlSetting } from './http-url.setting.js';
import { qstashSettings } from './qstash.settings.js';
import { signingSecretProblem, signingSecretSetting } from './signing-secret.setting.js';

export function moduleSettingProblems(options: AgentHooksModuleOptions, env: NodeJS.ProcessEnv = process.env): SettingProblem[] {
  const webhooks = options.webhooks ?? {};
  const fromEnv: EnvironmentSetting[] = [
    ...(webhooks.signingSecret === undefined ? [signingSecretSetting] : []),
    ...(webhooks.allowNetworks === undefined ? [allowNetworksSetting] : []),
    ...(webhooks.appUrl === undefined ? [httpUrlSetting(APP_URL_ENV)] : []),
    ...qstashSettings,
  ];
  return [...optionProblems(options), ...environmentProblems(fromEnv, env)];
}

/** The same rules for the values given as module options, named by their option path. */
function optionProblems(options: AgentHooksModuleOptions): SettingProblem[] {
  const { signingSecret, allowNetworks, appUrl } = options.webhooks ?? {};
  const checks: [string, string | undefined][] = [
    ['webhooks.signingSecret', signingSecret ? signingSecretProblem(signingSecret) : undefined],
    ['webhooks.allowNetworks', allowNetworks ? allowNetworksProblem(allowNetworks) : undefined],
    ['webhooks.appUrl', appUrl ? httpUrlProblem(appUrl) : undefined],
    ['redis', options.redis !== undefined ? redisProblem(options.redis) : undefined],
  ];
  return checks.flatMap(([variable, problem]) => (problem === undefined ? [] : [{ variable, problem }]));
}

/** Why a Redis URL cannot be used, in the words of the connection parser (which never quotes the URL). */
export function redisProblem(url: string): string | undefined {
  try {
    redisConnection(url);
    return undefined;
  } catch (error) {
    if (!(error instanceof QueueConfigurationError)) throw error;
    return error.message.replace(/^redis: /, '');
  }
}
