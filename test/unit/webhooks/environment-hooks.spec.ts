/**
 * L1 / L3 / W10 / issue 3 item 6: environment hooks (`AGENT_HOOK_WEBHOOK_*`) are built from the current
 * environment at every use, hold only a template for the token, and every invalid setting names the
 * variable and never its value. process.env is restored after each test.
 */
import { HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { AGENT_HOOK_POINTS, ENGINE_HOOK_POINTS } from '../../../src/hooks/hook-points.js';
import type { RegisteredHook } from '../../../src/hooks/registered-hook.js';
import { EnvironmentWebhookSource, readEnvironmentHooks } from '../../../src/webhooks/environment-hooks.js';
import { resolveHeaders } from '../../../src/webhooks/header-template.js';

const URL_VAR = 'AGENT_HOOK_WEBHOOK_URL';
const TOKEN_VAR = 'AGENT_HOOK_WEBHOOK_TOKEN';
const EVENTS_VAR = 'AGENT_HOOK_WEBHOOK_EVENTS';
const RESPONSE_VAR = 'AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING';
const ON_ERROR_VAR = 'AGENT_HOOK_WEBHOOK_ON_ERROR';
const APP_URL_VAR = 'AGENT_HOOKS_APP_URL';
const MANAGED = [URL_VAR, TOKEN_VAR, EVENTS_VAR, RESPONSE_VAR, ON_ERROR_VAR, APP_URL_VAR];

const SECRET = 'sk-live-DISTINCTIVE-93ac10f2';
const ROTATED = 'sk-live-ROTATED-5e61b0d8';
const RECEIVER = 'https://receiver.example.com/agent-hooks';

let saved: Record<string, string | undefined>;
beforeEach(() => {
  saved = Object.fromEntries(MANAGED.map((name) => [name, process.env[name]]));
  for (const name of MANAGED) delete process.env[name];
});
afterEach(() => {
  for (const name of MANAGED) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** Sets the variables given (undefined deletes). */
function setEnv(values: Partial<Record<string, string | undefined>>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

function configure(values: Partial<Record<string, string | undefined>> = {}): void {
  setEnv({ [URL_VAR]: RECEIVER, [TOKEN_VAR]: SECRET, [EVENTS_VAR]: 'afterStep', ...values });
}

/** The error thrown by `work`, naming `variable` and never the secret or `value`. */
function envError(work: () => unknown, variable: string, ...also: string[]): HookConfigurationError {
  let caught: unknown;
  try {
    work();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(HookConfigurationError);
  const error = caught as HookConfigurationError;
  expect(error.message).toContain(variable);
  for (const text of also) expect(error.message).toContain(text);
  expect(error.message).not.toContain(SECRET);
  expect(error.message).not.toContain('DISTINCTIVE');
  return error;
}

const ids = (hooks: readonly RegisteredHook[]) => hooks.map((hook) => hook.id);

describe('L1 readEnvironmentHooks: enabling', () => {
  it('L1: no AGENT_HOOK_WEBHOOK_URL means no hooks, whatever else is set', () => {
    setEnv({ [TOKEN_VAR]: SECRET, [EVENTS_VAR]: 'not-an-event', [RESPONSE_VAR]: 'bogus' });
    expect(readEnvironmentHooks()).toEqual([]);
  });

  it('L1: an empty AGENT_HOOK_WEBHOOK_URL means no hooks', () => {
    setEnv({ [URL_VAR]: '', [EVENTS_VAR]: 'afterStep' });
    expect(readEnvironmentHooks()).toEqual([]);
  });

  it('L1: one hook per listed event, with the documented identity and defaults', () => {
    configure({ [EVENTS_VAR]: 'afterStep,afterToolCall' });
    const hooks = readEnvironmentHooks();
    expect(hooks).toEqual([
      {
        id: 'server-env-webhook:afterStep',
        point: 'afterStep',
        source: 'environment',
        failurePolicy: 'fail',
        onError: 'continue',
        control: false,
        order: 0,
        webhook: {
          url: RECEIVER,
          delivery: 'fetch',
          timeout: 30,
          headers: { Authorization: 'Bearer ${AGENT_HOOK_WEBHOOK_TOKEN}' },
          allowedEnvVars: [TOKEN_VAR],
          responseHandling: 'ignore',
          onError: 'continue',
        },
      },
      expect.objectContaining({ id: 'server-env-webhook:afterToolCall', point: 'afterToolCall' }),
    ]);
  });

  it('S2: the token value is never copied into the hooks; it is resolved at send time (rotation picked up)', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall' });
    const [hook] = readEnvironmentHooks();
    expect(JSON.stringify(hook)).not.toContain(SECRET);
    expect(resolveHeaders(hook!.webhook!.headers, hook!.webhook!.allowedEnvVars)).toEqual({ Authorization: `Bearer ${SECRET}` });
    process.env[TOKEN_VAR] = ROTATED;
    expect(resolveHeaders(hook!.webhook!.headers, hook!.webhook!.allowedEnvVars)).toEqual({ Authorization: `Bearer ${ROTATED}` });
  });

  it('L1: the hooks are frozen (shared by every dispatch)', () => {
    configure();
    const [hook] = readEnvironmentHooks();
    expect(Object.isFrozen(hook)).toBe(true);
    expect(Object.isFrozen(hook!.webhook)).toBe(true);
    expect(Object.isFrozen(hook!.webhook!.headers)).toBe(true);
  });

  it('L1: an explicit env argument is read instead of process.env', () => {
    expect(readEnvironmentHooks({ [URL_VAR]: RECEIVER, [TOKEN_VAR]: SECRET, [EVENTS_VAR]: 'onComplete' }).map((h) => h.point)).toEqual(['onComplete']);
  });
});

describe('L1 AGENT_HOOK_WEBHOOK_URL', () => {
  it.each([
    ['not a URL', 'receiver.example.com/hooks'],
    ['ftp', 'ftp://receiver.example.com/'],
    ['protocol-relative', '//receiver.example.com/hooks'],
    ['credentials', `https://user:${SECRET}@receiver.example.com/`],
    ['a backslash', `https://receiver.example.com\\${SECRET}`],
    ['whitespace', ` ${RECEIVER}`],
  ])('L1: %s is rejected naming the variable, not its value', (_label, url) => {
    configure({ [URL_VAR]: url });
    envError(() => readEnvironmentHooks(), URL_VAR);
  });

  it('L1: an app-relative URL resolves against AGENT_HOOKS_APP_URL', () => {
    configure({ [URL_VAR]: '/hooks/env', [APP_URL_VAR]: 'https://app.example.com' });
    expect(readEnvironmentHooks()[0]!.webhook!.url).toBe('https://app.example.com/hooks/env');
  });

  it('L1: an app-relative URL resolves against the appUrl option first', () => {
    configure({ [URL_VAR]: '/hooks/env', [APP_URL_VAR]: 'https://from-env.example.com' });
    expect(readEnvironmentHooks(process.env, { appUrl: 'https://from-option.example.com' })[0]!.webhook!.url).toBe(
      'https://from-option.example.com/hooks/env',
    );
  });

  it('L1: an app-relative URL without an app URL is rejected', () => {
    configure({ [URL_VAR]: '/hooks/env' });
    envError(() => readEnvironmentHooks(), URL_VAR, APP_URL_VAR);
  });
});

describe('L1 AGENT_HOOK_WEBHOOK_TOKEN', () => {
  it('L1: required when the URL is set', () => {
    configure({ [TOKEN_VAR]: undefined });
    envError(() => readEnvironmentHooks(), TOKEN_VAR, 'required');
  });

  it('L1: an empty token counts as missing', () => {
    configure({ [TOKEN_VAR]: '' });
    envError(() => readEnvironmentHooks(), TOKEN_VAR);
  });
});

describe('L1 AGENT_HOOK_WEBHOOK_EVENTS', () => {
  it('L1: trimmed, empties dropped, de-duplicated in first-seen order', () => {
    configure({ [EVENTS_VAR]: ' afterStep , ,afterStep,onComplete,,\tbeforeStep ' });
    expect(ids(readEnvironmentHooks())).toEqual([
      'server-env-webhook:afterStep',
      'server-env-webhook:onComplete',
      'server-env-webhook:beforeStep',
    ]);
  });

  it('L1: every agent-family type is accepted', () => {
    configure({ [EVENTS_VAR]: AGENT_HOOK_POINTS.join(',') });
    expect(readEnvironmentHooks().map((hook) => hook.point)).toEqual([...AGENT_HOOK_POINTS]);
  });

  it.each([
    ['unset', undefined],
    ['empty', ''],
    ['only commas and spaces', ' , ,'],
  ])('L1: %s is rejected as required', (_label, value) => {
    configure({ [EVENTS_VAR]: value });
    envError(() => readEnvironmentHooks(), EVENTS_VAR, 'required');
  });

  it.each([
    ['an unknown type', `afterStep,${SECRET}`],
    ['an engine-family point', 'afterStep,on_run_start'],
    ['a wrong case', 'afterstep'],
  ])('L1: %s is rejected naming the variable, not the entry', (_label, value) => {
    configure({ [EVENTS_VAR]: value });
    const error = envError(() => readEnvironmentHooks(), EVENTS_VAR);
    expect(error.message).not.toContain('on_run_start');
    expect(error.message).not.toContain('afterstep');
  });
});

describe('W10 AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING', () => {
  it("W10: 'ignore' (and unset, and empty) keep every listed event a notification", () => {
    for (const value of [undefined, '', 'ignore']) {
      configure({ [EVENTS_VAR]: 'beforeToolCall,afterToolCall', [RESPONSE_VAR]: value });
      expect(readEnvironmentHooks().map((hook) => hook.webhook!.responseHandling)).toEqual(['ignore', 'ignore']);
    }
  });

  it("W10: 'toolCall' turns listed beforeToolCall/afterToolCall into controls; other events stay notifications", () => {
    configure({ [EVENTS_VAR]: 'beforeToolCall,afterStep,afterToolCall,onToolCallError', [RESPONSE_VAR]: 'toolCall' });
    const modes = Object.fromEntries(readEnvironmentHooks().map((hook) => [hook.point, hook.webhook!.responseHandling]));
    expect(modes).toEqual({ beforeToolCall: 'toolCall', afterStep: 'ignore', afterToolCall: 'toolCall', onToolCallError: 'ignore' });
  });

  it("W10: 'toolCall' with only afterToolCall listed inspects only after (the event list chooses)", () => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: 'toolCall' });
    expect(readEnvironmentHooks().map((hook) => [hook.point, hook.webhook!.responseHandling])).toEqual([['afterToolCall', 'toolCall']]);
  });

  it("K1: 'toolCall' turns listed beforeModelCall/afterModelCall into controls; onModelCallError stays a notification", () => {
    configure({ [EVENTS_VAR]: 'beforeModelCall,afterModelCall,onModelCallError', [RESPONSE_VAR]: 'toolCall' });
    const modes = Object.fromEntries(readEnvironmentHooks().map((hook) => [hook.point, hook.webhook!.responseHandling]));
    expect(modes).toEqual({ beforeModelCall: 'toolCall', afterModelCall: 'toolCall', onModelCallError: 'ignore' });
  });

  it("W10: 'toolCall' needs beforeToolCall or afterToolCall in the event list", () => {
    configure({ [EVENTS_VAR]: 'afterStep,onToolCallError', [RESPONSE_VAR]: 'toolCall' });
    envError(() => readEnvironmentHooks(), RESPONSE_VAR, 'beforeToolCall', 'afterToolCall');
  });

  it.each(['toolResult', 'toolCallAndResult'])('W10: responseHandling %s is rejected naming toolCall', (value) => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: value });
    envError(() => readEnvironmentHooks(), RESPONSE_VAR, "'toolCall'", 'removed');
  });

  it('W10: any other value is rejected naming the variable, not the value', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: SECRET });
    envError(() => readEnvironmentHooks(), RESPONSE_VAR);
  });
});

describe('W12 AGENT_HOOK_WEBHOOK_ON_ERROR', () => {
  it("W12: 'block' applies to the controls only; notifications keep 'continue'", () => {
    configure({ [EVENTS_VAR]: 'beforeToolCall,afterStep', [RESPONSE_VAR]: 'toolCall', [ON_ERROR_VAR]: 'block' });
    const [control, notification] = readEnvironmentHooks();
    expect(control).toMatchObject({ point: 'beforeToolCall', onError: 'block', webhook: { responseHandling: 'toolCall', onError: 'block' } });
    expect(notification).toMatchObject({ point: 'afterStep', onError: 'continue', webhook: { responseHandling: 'ignore', onError: 'continue' } });
  });

  it("W12: 'continue' (and unset) is the default", () => {
    for (const value of [undefined, 'continue']) {
      configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: 'toolCall', [ON_ERROR_VAR]: value });
      expect(readEnvironmentHooks()[0]).toMatchObject({ onError: 'continue', webhook: { onError: 'continue' } });
    }
  });

  it("W12: 'block' without toolCall is rejected", () => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [ON_ERROR_VAR]: 'block' });
    envError(() => readEnvironmentHooks(), ON_ERROR_VAR, 'toolCall');
  });

  it('W12: any other value is rejected naming the variable, not the value', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: 'toolCall', [ON_ERROR_VAR]: SECRET });
    envError(() => readEnvironmentHooks(), ON_ERROR_VAR);
  });
});

describe('L1 EnvironmentWebhookSource', () => {
  it('L1: hooksFor sees the current environment on every call: added, changed, removed', () => {
    const source = new EnvironmentWebhookSource();
    expect(source.hooksFor('afterToolCall')).toEqual([]);

    configure({ [EVENTS_VAR]: 'afterToolCall' });
    expect(ids(source.hooksFor('afterToolCall'))).toEqual(['server-env-webhook:afterToolCall']);
    expect(source.hooksFor('afterToolCall')[0]!.webhook!.responseHandling).toBe('ignore');

    setEnv({ [RESPONSE_VAR]: 'toolCall', [ON_ERROR_VAR]: 'block' });
    expect(source.hooksFor('afterToolCall')[0]).toMatchObject({ onError: 'block', webhook: { responseHandling: 'toolCall' } });

    setEnv({ [EVENTS_VAR]: 'beforeToolCall' });
    expect(source.hooksFor('afterToolCall')).toEqual([]);
    expect(ids(source.hooksFor('beforeToolCall'))).toEqual(['server-env-webhook:beforeToolCall']);

    setEnv({ [URL_VAR]: 'https://other.example.com/h' });
    expect(source.hooksFor('beforeToolCall')[0]!.webhook!.url).toBe('https://other.example.com/h');

    // L3: a removed environment hook no longer controls anything.
    setEnv({ [URL_VAR]: undefined });
    expect(source.hooksFor('beforeToolCall')).toEqual([]);
  });

  it('L1: an unchanged environment is answered from memory (same array); a rotated token changes nothing', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall' });
    const source = new EnvironmentWebhookSource();
    const first = source.hooksFor('afterToolCall');
    expect(source.hooksFor('afterToolCall')).toBe(first);
    process.env[TOKEN_VAR] = ROTATED;
    expect(source.hooksFor('afterToolCall')).toBe(first);
    expect(JSON.stringify(first)).not.toContain(ROTATED);
  });

  it('L1: removing the token is seen on the next call', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall' });
    const source = new EnvironmentWebhookSource();
    expect(source.hooksFor('afterToolCall')).toHaveLength(1);
    delete process.env[TOKEN_VAR];
    envError(() => source.hooksFor('afterToolCall'), TOKEN_VAR);
  });

  it('L1: invalid settings throw on every call (a configured control is never silently disabled), and recover when fixed', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: 'toolResult' });
    const source = new EnvironmentWebhookSource();
    const first = envError(() => source.hooksFor('afterToolCall'), RESPONSE_VAR);
    const second = envError(() => source.hooksFor('afterStep'), RESPONSE_VAR);
    expect(second).not.toBe(first);
    setEnv({ [RESPONSE_VAR]: 'toolCall' });
    expect(source.hooksFor('afterToolCall')[0]!.webhook!.responseHandling).toBe('toolCall');
  });

  it.each(ENGINE_HOOK_POINTS)('L1: engine point %s never has environment hooks, even with an invalid environment', (point) => {
    configure({ [EVENTS_VAR]: 'bogus' });
    expect(new EnvironmentWebhookSource().hooksFor(point)).toEqual([]);
  });

  it('L1: points not listed get no hooks', () => {
    configure({ [EVENTS_VAR]: 'afterStep' });
    const source = new EnvironmentWebhookSource();
    expect(source.hooksFor('beforeStep')).toEqual([]);
    expect(source.hooksFor('afterStep')).toHaveLength(1);
  });

  it('L1: the appUrl option resolves an app-relative URL', () => {
    configure({ [URL_VAR]: '/agent-hooks' });
    const source = new EnvironmentWebhookSource({ appUrl: 'https://app.example.com' });
    expect(source.hooksFor('afterStep')[0]!.webhook!.url).toBe('https://app.example.com/agent-hooks');
  });

  it('L1: a change of AGENT_HOOKS_APP_URL is seen for an app-relative URL', () => {
    configure({ [URL_VAR]: '/agent-hooks', [APP_URL_VAR]: 'https://one.example.com' });
    const source = new EnvironmentWebhookSource();
    expect(source.hooksFor('afterStep')[0]!.webhook!.url).toBe('https://one.example.com/agent-hooks');
    setEnv({ [APP_URL_VAR]: 'https://two.example.com' });
    expect(source.hooksFor('afterStep')[0]!.webhook!.url).toBe('https://two.example.com/agent-hooks');
  });
});

describe('L1 EnvironmentWebhookSource.snapshot (one read per step)', () => {
  it('L1: a snapshot answers as the environment was when it was taken; the next snapshot sees the change', () => {
    const source = new EnvironmentWebhookSource();
    const before = source.snapshot();
    configure({ [EVENTS_VAR]: 'afterToolCall' });
    expect(before.hooksFor('afterToolCall')).toEqual([]);
    const during = source.snapshot();
    expect(ids(during.hooksFor('afterToolCall'))).toEqual(['server-env-webhook:afterToolCall']);
    // L3: removed between two snapshots, the hook is gone from the next one only.
    setEnv({ [URL_VAR]: undefined });
    expect(ids(during.hooksFor('afterToolCall'))).toEqual(['server-env-webhook:afterToolCall']);
    expect(source.snapshot().hooksFor('afterToolCall')).toEqual([]);
  });

  it('L1: the snapshot and hooksFor give the same hooks for every point', () => {
    configure({ [EVENTS_VAR]: 'beforeToolCall,afterToolCall,afterStep', [RESPONSE_VAR]: 'toolCall' });
    const source = new EnvironmentWebhookSource();
    const snapshot = source.snapshot();
    for (const point of [...AGENT_HOOK_POINTS, ...ENGINE_HOOK_POINTS]) expect(snapshot.hooksFor(point)).toBe(source.hooksFor(point));
  });

  it('L1: taking a snapshot of an invalid environment does not throw; every agent point of it does, engine points do not', () => {
    configure({ [EVENTS_VAR]: 'afterToolCall', [RESPONSE_VAR]: 'toolResult' });
    const snapshot = new EnvironmentWebhookSource().snapshot();
    const first = envError(() => snapshot.hooksFor('afterToolCall'), RESPONSE_VAR);
    expect(envError(() => snapshot.hooksFor('afterStep'), RESPONSE_VAR)).not.toBe(first);
    for (const point of ENGINE_HOOK_POINTS) expect(snapshot.hooksFor(point)).toEqual([]);
  });
});
