/** `AGENT_HOOKS_WEBHOOK_SECRET`: a Standard Webhooks secret, exactly as the signer will take it at send time. */
import { SIGNING_SECRET_ENV } from '../../webhooks/outgoing-headers.js';
import { WebhookSigner } from '../../webhooks/webhook-signer.js';
import type { EnvironmentSetting } from './environment-setting.js';

/** Why `secret` cannot sign, or `undefined`: the same check the signer makes, so start and send agree. */
export function signingSecretProblem(secret: string): string | undefined {
  try {
    new WebhookSigner(secret);
    return undefined;
  } catch {
    return 'must be "whsec_" followed by base64 (a Standard Webhooks secret)';
  }
}

export const signingSecretSetting: EnvironmentSetting = { variable: SIGNING_SECRET_ENV, problem: signingSecretProblem };
