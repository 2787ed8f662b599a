/**
 * W4, W5, W10, issue 3 item 1: the webhook config schema (strict shape, URL rules, header templates) and
 * its cross-field rules; the caller-hook validator (reserved ids and variables). Every rejection is a
 * `HookConfigurationError` naming the hook and key path and never a value: a distinctive secret placed in
 * the config must be absent from every message.
 */
import { HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { AGENT_HOOK_POINTS, type AgentHookPoint } from '../../../src/hooks/hook-points.js';
import { HookRegistry } from '../../../src/hooks/hook-registry.js';
import type { AgentHook } from '../../../src/hooks/agent-hook.js';
import {
  validateWebhookHook,
  WebhookCallerHookValidator,
  type WebhookHookInput,
} from '../../../src/webhooks/webhook-config.schema.js';

const SECRET = 'sk-live-DISTINCTIVE-7c1e9a44';
const WHERE = 'hooks[0] (h1)';
const URL_OK = 'https://receiver.example.com/hooks';
const APP_URL_ENV = 'AGENT_HOOKS_APP_URL';

function hook(webhook: unknown, extra: Partial<WebhookHookInput> = {}): WebhookHookInput {
  return { id: 'h1', type: 'afterToolCall', webhook, ...extra };
}

function validate(input: WebhookHookInput, appUrl?: string) {
  return validateWebhookHook(input, { where: WHERE, ...(appUrl !== undefined ? { appUrl } : {}) });
}

/** The rejection, checked: the right class, names the hook and every `names`, never the secret. */
function rejection(work: () => unknown, ...names: string[]): HookConfigurationError {
  let caught: unknown;
  try {
    work();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(HookConfigurationError);
  const error = caught as HookConfigurationError;
  expect(error.code).toBe('configuration');
  expect(error.message).toContain(WHERE);
  for (const name of names) expect(error.message).toContain(name);
  expect(error.message).not.toContain(SECRET);
  expect(error.message).not.toContain('DISTINCTIVE');
  return error;
}

let savedAppUrl: string | undefined;
beforeEach(() => {
  savedAppUrl = process.env[APP_URL_ENV];
  delete process.env[APP_URL_ENV];
});
afterEach(() => {
  if (savedAppUrl === undefined) delete process.env[APP_URL_ENV];
  else process.env[APP_URL_ENV] = savedAppUrl;
});

describe('W4 webhook config: shape and defaults', () => {
  it('W4: a bare url gets the defaults (fetch, 30 s, ignore, continue) and nothing else', () => {
    expect(validate(hook({ url: URL_OK }))).toEqual({
      url: URL_OK,
      delivery: 'fetch',
      timeout: 30,
      responseHandling: 'ignore',
      onError: 'continue',
    });
  });

  it('W4: a full notification config is kept as given', () => {
    const webhook = {
      url: URL_OK,
      delivery: 'queue' as const,
      timeout: 5,
      headers: { Authorization: 'Bearer ${HOOK_TOKEN}', 'X-Team': 'platform' },
      allowedEnvVars: ['HOOK_TOKEN'],
      body: { source: 'agent', nested: { a: [1, 2] } },
      eventFields: ['operationId', 'toolCallId'],
      responseHandling: 'ignore' as const,
      onError: 'continue' as const,
      fallback: 'none' as const,
    };
    expect(validate(hook(webhook))).toEqual(webhook);
  });

  it('W4: unknown keys are rejected (strict), naming the key', () => {
    rejection(() => validate(hook({ url: URL_OK, retries: 3 })), 'retries');
    rejection(() => validate(hook({ url: URL_OK, secretHeader: SECRET })), 'secretHeader');
  });

  it('W4: the webhook must be an object', () => {
    for (const webhook of [undefined, null, 'https://x.example', [URL_OK], 42]) {
      rejection(() => validate(hook(webhook)), 'webhook');
    }
  });

  it('W4: the hook type must be an agent-family point', () => {
    rejection(() => validate(hook({ url: URL_OK }, { type: 'on_run_start' })), 'type');
    rejection(() => validate(hook({ url: URL_OK }, { type: 'afterEverything' })), 'type');
  });
});

describe('W4 url', () => {
  it.each(['https://receiver.example.com/hooks', 'http://receiver.example.com:8080/a/b?x=1', 'HTTPS://Receiver.Example.com/x'])(
    'W4: absolute http(s) url %s is accepted',
    (url) => {
      expect(validate(hook({ url })).url).toBe(new URL(url).href);
    },
  );

  it.each([
    ['ftp', 'ftp://receiver.example.com/x'],
    ['a bare host', 'receiver.example.com/hooks'],
    ['a scheme without slashes', 'http:receiver.example.com'],
    ['javascript', 'javascript:alert(1)'],
    ['empty', ''],
    ['whitespace', 'https://receiver.example.com/a b'],
    ['leading whitespace', ' https://receiver.example.com/'],
    ['a newline', 'https://receiver.example.com/\n'],
    ['not a URL', 'https://'],
  ])('W4: %s url is rejected', (_label, url) => {
    rejection(() => validate(hook({ url })), 'webhook.url');
  });

  it('W4: credentials in the url are rejected without echoing them', () => {
    rejection(() => validate(hook({ url: `https://user:${SECRET}@receiver.example.com/` })), 'webhook.url', 'credentials');
    rejection(() => validate(hook({ url: `https://${SECRET}@receiver.example.com/` })), 'webhook.url', 'credentials');
  });

  it('W4: backslashes are rejected, absolute or app-relative', () => {
    rejection(() => validate(hook({ url: `https://receiver.example.com\\${SECRET}` })), 'webhook.url', 'backslash');
    rejection(() => validate(hook({ url: '/\\evil.example.com/x' }), 'https://app.example.com'), 'webhook.url', 'backslash');
  });

  it('W4: a protocol-relative //host url is rejected', () => {
    rejection(() => validate(hook({ url: '//evil.example.com/hooks' }), 'https://app.example.com'), 'webhook.url', '//host');
  });

  it('W4: a non-string url is rejected', () => {
    rejection(() => validate(hook({ url: 42 })), 'webhook.url');
    rejection(() => validate(hook({})), 'webhook.url');
  });

  it('W4: an app-relative /path is checked against the appUrl option and kept as given (resolved at send time)', () => {
    expect(validate(hook({ url: '/hooks/agent?x=1' }), 'https://app.example.com/base/').url).toBe('/hooks/agent?x=1');
  });

  it('W4: an app-relative /path is checked against AGENT_HOOKS_APP_URL when no option is given', () => {
    process.env[APP_URL_ENV] = 'http://app.internal:3000';
    expect(validate(hook({ url: '/hooks' })).url).toBe('/hooks');
  });

  it('W4: the appUrl option wins over AGENT_HOOKS_APP_URL', () => {
    process.env[APP_URL_ENV] = 'not-an-app-url';
    expect(validate(hook({ url: '/hooks' }), 'https://from-option.example.com').url).toBe('/hooks');
    process.env[APP_URL_ENV] = 'http://from-env.example.com';
    rejection(() => validate(hook({ url: '/hooks' }), 'from-option.example.com'), 'webhook.url', 'app URL');
  });

  it('W4: an app-relative url without any app URL is an error naming both settings', () => {
    rejection(() => validate(hook({ url: '/hooks' })), 'webhook.url', 'webhooks.appUrl', APP_URL_ENV);
  });

  it('W4: an invalid app URL is an error, without echoing it', () => {
    rejection(() => validate(hook({ url: '/hooks' }), `https://u:${SECRET}@app.example.com`), 'webhook.url', 'app URL');
    rejection(() => validate(hook({ url: '/hooks' }), 'app.example.com'), 'webhook.url', 'app URL');
  });

  it('W4: an app-relative path cannot leave the app origin', () => {
    const url = validate(hook({ url: '/..//evil.example.com/x' }), 'https://app.example.com').url;
    expect(url).toBe('/..//evil.example.com/x');
    expect(new URL(url, 'https://app.example.com').origin).toBe('https://app.example.com');
  });
});

describe('W4 delivery, timeout, fallback', () => {
  it.each(['fetch', 'queue', 'qstash'])('W4: delivery %s is accepted', (delivery) => {
    expect(validate(hook({ url: URL_OK, delivery })).delivery).toBe(delivery);
  });

  it('W4: another delivery is rejected', () => {
    rejection(() => validate(hook({ url: URL_OK, delivery: 'kafka' })), 'webhook.delivery');
  });

  it.each([0.001, 1, 30, 2_147_483.647])('W4: timeout %p seconds is accepted', (timeout) => {
    expect(validate(hook({ url: URL_OK, timeout })).timeout).toBe(timeout);
  });

  it.each([0, -1, 2_147_483.648, 1e12, Number.POSITIVE_INFINITY, Number.NaN, '30', null])('W4: timeout %p is rejected', (timeout) => {
    rejection(() => validate(hook({ url: URL_OK, timeout })), 'webhook.timeout');
  });

  it("W4: fallback 'none' is kept; absent means the default fallback", () => {
    expect(validate(hook({ url: URL_OK, delivery: 'qstash', fallback: 'none' })).fallback).toBe('none');
    expect(validate(hook({ url: URL_OK, delivery: 'qstash' }))).not.toHaveProperty('fallback');
  });

  it('W4: another fallback value is rejected', () => {
    rejection(() => validate(hook({ url: URL_OK, fallback: 'queue' })), 'webhook.fallback');
    rejection(() => validate(hook({ url: URL_OK, fallback: true })), 'webhook.fallback');
  });
});

describe('W4/W6 headers and allowedEnvVars', () => {
  it('W6: header values must be strings, named by path and never echoed', () => {
    rejection(() => validate(hook({ url: URL_OK, headers: { 'X-Count': 3, Authorization: SECRET } })), 'webhook.headers.X-Count');
    rejection(() => validate(hook({ url: URL_OK, headers: [SECRET] })), 'webhook.headers');
  });

  it('W6: allowedEnvVars must be variable names', () => {
    expect(validate(hook({ url: URL_OK, allowedEnvVars: ['HOOK_TOKEN', '_x', 'a1'] })).allowedEnvVars).toEqual(['HOOK_TOKEN', '_x', 'a1']);
    for (const name of ['1ABC', 'A-B', 'A B', '', 'TOKEN=x']) {
      rejection(() => validate(hook({ url: URL_OK, allowedEnvVars: ['OK', name] })), 'webhook.allowedEnvVars[1]');
    }
    rejection(() => validate(hook({ url: URL_OK, allowedEnvVars: 'HOOK_TOKEN' })), 'webhook.allowedEnvVars');
  });

  it.each(['Host', 'content-length', 'Transfer-Encoding', 'CONNECTION', 'webhook-id', 'Webhook-Timestamp', 'WEBHOOK-SIGNATURE', 'Upstash-Callback', 'upstash-forward-authorization', 'UPSTASH-DELAY', 'Upstash-X'])(
    'W4: the transport header %s is refused at registration, naming the header, never its value',
    (name) => {
      rejection(() => validate(hook({ url: URL_OK, headers: { [name]: SECRET } })), 'webhook.headers', JSON.stringify(name));
    },
  );

  it('W4: ordinary headers that merely contain those words are accepted', () => {
    expect(validate(hook({ url: URL_OK, headers: { 'X-Upstash-Note': 'a', 'X-Webhook-Id': 'b', 'Content-Type': 'application/json' } })).headers).toEqual({
      'X-Upstash-Note': 'a',
      'X-Webhook-Id': 'b',
      'Content-Type': 'application/json',
    });
  });

  it('W6: a forbidden header is rejected at config time without its value', () => {
    rejection(() => validate(hook({ url: URL_OK, headers: { Host: SECRET } })), 'webhook.headers', '"Host"', 'forbidden');
  });

  it('W6: a template variable missing from allowedEnvVars is rejected at config time', () => {
    rejection(
      () => validate(hook({ url: URL_OK, headers: { Authorization: `${SECRET} \${HOOK_TOKEN}` }, allowedEnvVars: ['OTHER'] })),
      'HOOK_TOKEN',
      'allowedEnvVars',
    );
  });

  it('W6: a malformed template is rejected at config time', () => {
    rejection(() => validate(hook({ url: URL_OK, headers: { Authorization: `${SECRET} \${HOOK_TOKEN` }, allowedEnvVars: ['HOOK_TOKEN'] })), '"Authorization"');
  });

  it('W6: the variables need not be set at config time (they are read at send time)', () => {
    delete process.env.W6_CONFIG_ONLY_TOKEN;
    const webhook = validate(hook({ url: URL_OK, headers: { 'X-Token': '${W6_CONFIG_ONLY_TOKEN}' }, allowedEnvVars: ['W6_CONFIG_ONLY_TOKEN'] }));
    expect(webhook.headers).toEqual({ 'X-Token': '${W6_CONFIG_ONLY_TOKEN}' });
  });

  it('W4: a "__proto__" key in headers or body is rejected', () => {
    rejection(() => validate(hook({ url: URL_OK, headers: JSON.parse(`{"__proto__":"${SECRET}"}`) })), 'webhook.headers', '__proto__');
    rejection(() => validate(hook({ url: URL_OK, body: JSON.parse('{"__proto__":{"polluted":true}}') })), 'webhook.body', '__proto__');
  });
});

describe('W4 body and eventFields', () => {
  it('W4: body must be a JSON object', () => {
    for (const body of [[1], null, 'text', 5]) rejection(() => validate(hook({ url: URL_OK, body })), 'webhook.body');
    rejection(() => validate(hook({ url: URL_OK, body: { n: BigInt(1) } })), 'webhook.body', 'JSON');
  });

  it('W4: eventFields must be a list of strings', () => {
    expect(validate(hook({ url: URL_OK, eventFields: [] })).eventFields).toEqual([]);
    rejection(() => validate(hook({ url: URL_OK, eventFields: ['a', 1] })), 'webhook.eventFields[1]');
    rejection(() => validate(hook({ url: URL_OK, eventFields: 'operationId' })), 'webhook.eventFields');
  });
});

describe('W10 responseHandling and onError values', () => {
  it.each(['ignore', 'toolCall'])('W10: responseHandling %s is accepted', (responseHandling) => {
    expect(validate(hook({ url: URL_OK, responseHandling })).responseHandling).toBe(responseHandling);
  });

  it('W10: responseHandling toolResult is rejected naming toolCall', () => {
    const error = rejection(() => validate(hook({ url: URL_OK, responseHandling: 'toolResult' })), 'webhook.responseHandling', "'toolCall'", 'removed');
    expect(error.message).toContain('toolResult');
  });

  it('W10: responseHandling toolCallAndResult is rejected naming toolCall', () => {
    rejection(() => validate(hook({ url: URL_OK, responseHandling: 'toolCallAndResult' })), 'webhook.responseHandling', "'toolCall'", 'removed');
  });

  it('W10: any other responseHandling is rejected', () => {
    rejection(() => validate(hook({ url: URL_OK, responseHandling: 'decide' })), 'webhook.responseHandling');
  });

  it('W12: onError continue / block are the values; others are rejected', () => {
    expect(validate(hook({ url: URL_OK, onError: 'continue' })).onError).toBe('continue');
    expect(validate(hook({ url: URL_OK, responseHandling: 'toolCall', onError: 'block' })).onError).toBe('block');
    rejection(() => validate(hook({ url: URL_OK, onError: 'retry' })), 'webhook.onError');
  });
});

describe('W8–W12 cross-field rules', () => {
  const control = { url: URL_OK, responseHandling: 'toolCall' };

  it.each(['beforeToolCall', 'afterToolCall', 'beforeModelCall', 'afterModelCall'])('W8/W9/K1: toolCall is accepted on %s', (type) => {
    expect(validate(hook(control, { type })).responseHandling).toBe('toolCall');
  });

  const nonControlPoints = AGENT_HOOK_POINTS.filter((p) => !['beforeToolCall', 'afterToolCall', 'beforeModelCall', 'afterModelCall'].includes(p));
  it.each(nonControlPoints)('W10: toolCall is rejected on %s', (type) => {
    rejection(() => validate(hook(control, { type })), 'webhook.responseHandling', type);
  });

  it.each(['queue', 'qstash'])('DESIGN §4: toolCall with delivery %s is rejected (decisions are synchronous)', (delivery) => {
    rejection(() => validate(hook({ ...control, delivery })), 'webhook.delivery');
  });

  it('DESIGN §4: toolCall with delivery fetch is accepted', () => {
    expect(validate(hook({ ...control, delivery: 'fetch' })).delivery).toBe('fetch');
  });

  it('B2: toolCall with eventFields is rejected, even []', () => {
    rejection(() => validate(hook({ ...control, eventFields: [] })), 'webhook.eventFields');
    rejection(() => validate(hook({ ...control, eventFields: ['operationId'] })), 'webhook.eventFields');
  });

  it('B1: toolCall with body is rejected, even {}', () => {
    rejection(() => validate(hook({ ...control, body: {} })), 'webhook.body');
    rejection(() => validate(hook({ ...control, body: { token: SECRET } })), 'webhook.body');
  });

  it('W12: onError block without toolCall is rejected', () => {
    rejection(() => validate(hook({ url: URL_OK, onError: 'block' })), 'webhook.onError', 'toolCall');
    rejection(() => validate(hook({ url: URL_OK, responseHandling: 'ignore', onError: 'block' })), 'webhook.onError');
  });

  it('W2: a webhook control cannot also have a handler', () => {
    rejection(() => validate(hook(control, { handler: () => undefined })), 'handler');
  });

  it('W2: a notification webhook may have a handler', () => {
    expect(validate(hook({ url: URL_OK }, { handler: () => undefined })).responseHandling).toBe('ignore');
  });

  it.each(['beforeToolCall', 'afterToolCall', 'onToolCallError'])('W5: a matcher is accepted on %s', (type) => {
    expect(validate(hook({ url: URL_OK }, { type, matcher: '^fs/readFile$' })).url).toBe(URL_OK);
  });

  const nonToolPoints = AGENT_HOOK_POINTS.filter((p) => !['beforeToolCall', 'afterToolCall', 'onToolCallError'].includes(p));
  it.each(nonToolPoints)('W5: a matcher is rejected on %s', (type: AgentHookPoint) => {
    rejection(() => validate(hook({ url: URL_OK }, { type, matcher: '^fs/' })), 'matcher', type);
  });

  it("W5: a matcher key on a non-tool point is refused at registration, even '' or '*'", () => {
    rejection(() => validate(hook({ url: URL_OK }, { type: 'afterStep', matcher: '*' })), 'matcher', 'afterStep', 'tool points only');
    rejection(() => validate(hook({ url: URL_OK }, { type: 'onComplete', matcher: '' })), 'matcher', 'onComplete', 'tool points only');
  });

  it("W5: '' and '*' on a tool point mean every tool", () => {
    expect(validate(hook({ url: URL_OK }, { type: 'afterToolCall', matcher: '*' })).url).toBe(URL_OK);
    expect(validate(hook({ url: URL_OK }, { type: 'onToolCallError', matcher: '' })).url).toBe(URL_OK);
  });

  it('W5: an invalid matcher is rejected', () => {
    expect(() => validate(hook({ url: URL_OK }, { matcher: '(' }))).toThrow(HookConfigurationError);
  });
});

describe('WebhookCallerHookValidator', () => {
  const validator = new WebhookCallerHookValidator({ appUrl: 'https://app.example.com' });
  const callerWhere = (index: number, id: string) => `hooks[${index}] (${id})`;

  it('returns the normalized webhook; an app-relative url stays as given (W4: resolved at send time)', () => {
    const caller: AgentHook = { id: 'audit', type: 'afterStep', webhook: { url: '/hooks/audit' } };
    expect(validator.validate(caller, 2)).toEqual({
      url: '/hooks/audit',
      delivery: 'fetch',
      timeout: 30,
      responseHandling: 'ignore',
      onError: 'continue',
    });
  });

  it('names the hook by index and id', () => {
    const caller = { id: 'bad', type: 'afterStep', webhook: { url: URL_OK, timeout: 0 } } as AgentHook;
    expect(() => validator.validate(caller, 4)).toThrow(callerWhere(4, 'bad'));
  });

  it('L1: a caller cannot take the reserved server-env-webhook: prefix', () => {
    const withWebhook: AgentHook = { id: 'server-env-webhook:afterToolCall', type: 'afterToolCall', webhook: { url: URL_OK } };
    const handlerOnly: AgentHook = { id: 'server-env-webhook:x', type: 'afterStep', handler: () => undefined };
    expect(() => validator.validate(withWebhook, 0)).toThrow(/reserved/);
    expect(() => validator.validate(handlerOnly, 0)).toThrow(HookConfigurationError);
  });

  it('A4: a handler-only hook passes (nothing to normalize); a hook with neither is rejected', () => {
    expect(validator.validate({ id: 'h', type: 'afterStep', handler: () => undefined }, 0)).toBeUndefined();
    expect(() => validator.validate({ id: 'h', type: 'afterStep' }, 0)).toThrow(/handler or a webhook/);
  });

  it("S2: a caller hook cannot list the server's own variables in allowedEnvVars", () => {
    for (const name of ['AGENT_HOOK_WEBHOOK_TOKEN', 'AGENT_HOOKS_WEBHOOK_SECRET']) {
      const caller: AgentHook = {
        id: 'steal',
        type: 'afterStep',
        webhook: { url: URL_OK, headers: { 'X-T': `\${${name}}` }, allowedEnvVars: [name] },
      };
      expect(() => validator.validate(caller, 0)).toThrow(name);
    }
  });

  it('W10: applies the schema (toolResult rejected naming toolCall)', () => {
    const caller = { id: 'c', type: 'afterToolCall', webhook: { url: URL_OK, responseHandling: 'toolResult' } } as unknown as AgentHook;
    expect(() => validator.validate(caller, 0)).toThrow(/toolCall/);
  });

  it('A1: the registry rejects a batch with one invalid webhook and registers nothing', () => {
    const registry = new HookRegistry(validator);
    const hooks = [
      { id: 'ok', type: 'afterStep', webhook: { url: URL_OK } },
      { id: 'bad', type: 'afterStep', webhook: { url: URL_OK, responseHandling: 'toolCall' } },
    ] as AgentHook[];
    expect(() => registry.register('op-1', hooks)).toThrow(callerWhere(1, 'bad'));
    expect(registry.hasCallerHooks('op-1')).toBe(false);
  });
});
