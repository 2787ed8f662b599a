/**
 * QStash delivery (`delivery: 'qstash'`): the token and API URL are read at every publish (S2); checked here
 * once at start. An unset token stays allowed: only hooks that ask for QStash need it (D3 then applies).
 */
import { QSTASH_TOKEN_ENV, QSTASH_URL_ENV } from '../../queue/delivery/qstash-publisher.js';
import type { EnvironmentSetting } from './environment-setting.js';
import { httpUrlSetting } from './http-url.setting.js';

/** Sent as a bearer token: one header-safe word (visible ASCII, no spaces). */
const TOKEN = /^[\x21-\x7e]+$/;

export const qstashSettings: readonly EnvironmentSetting[] = [
  { variable: QSTASH_TOKEN_ENV, problem: (value) => (TOKEN.test(value) ? undefined : 'must be one word of visible ASCII characters (no spaces or control characters)') },
  httpUrlSetting(QSTASH_URL_ENV),
];
