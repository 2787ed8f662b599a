/**
 * W5: a matcher is a regular expression tested (unanchored) against `${identifier}/${apiName}`; it applies
 * to tool events only; omitted, '' and '*' match every tool; user patterns run on a linear-time engine.
 */
import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { HookConfigurationError, OnHook, type AgentHook, type OnToolCallErrorEvent } from '../../../src/index.js';
import { compileMatcher } from '../../../src/hooks/matcher.js';
import { afterEvent, beforeEvent, boot, captureLogs, envHook, TestEnvironment, type Booted } from './agent-test-kit.js';

let booted: Booted;
let environment: TestEnvironment;
let calls: string[];

function matched(id: string, matcher: string | undefined, type: AgentHook['type'] = 'beforeToolCall'): AgentHook {
  return { id, type, handler: () => void calls.push(id), ...(matcher !== undefined ? { matcher } : {}) };
}

async function firedFor(identifier: string, apiName: string): Promise<string[]> {
  calls = [];
  await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', identifier, apiName }));
  return [...calls];
}

beforeEach(async () => {
  calls = [];
  captureLogs();
  environment = new TestEnvironment();
  booted = await boot({ environment });
});

afterEach(async () => {
  await booted.moduleRef.close();
  jest.restoreAllMocks();
});

describe('W5 compileMatcher', () => {
  it.each([undefined, '', '*'])('W5: %p matches every tool (no matcher is compiled)', (pattern) => {
    expect(compileMatcher(pattern, 'test')).toBeUndefined();
  });

  it('W5: patterns are unanchored', () => {
    const matcher = compileMatcher('readFile', 'test')!;
    expect(matcher.source).toBe('readFile');
    expect(matcher.test('fs/readFile')).toBe(true);
    expect(matcher.test('fs/readFileSync')).toBe(true);
    expect(matcher.test('fs/writeFile')).toBe(false);
  });

  it('W5: anchors work when the pattern asks for them', () => {
    const matcher = compileMatcher('^fs/readFile$', 'test')!;
    expect(matcher.test('fs/readFile')).toBe(true);
    expect(matcher.test('xfs/readFile')).toBe(false);
    expect(matcher.test('fs/readFileSync')).toBe(false);
  });

  it.each(['(', '[a-', 'a{2,1}', '*abc', '(?<=a)b', '(a)\\1', '(?=x)'])('W5: an invalid pattern %p is rejected with HookConfigurationError naming it', (pattern) => {
    expect(() => compileMatcher(pattern, 'hooks[0] (x)')).toThrow(HookConfigurationError);
    expect(() => compileMatcher(pattern, 'hooks[0] (x)')).toThrow(/hooks\[0\] \(x\)/);
  });

  it('W5: `^(a+)+$` against a 10,000-character tool name finishes and answers correctly (linear-time engine)', () => {
    const matcher = compileMatcher('^(a+)+$', 'test')!;
    const almost = `${'a'.repeat(10_000)}!`;
    expect(matcher.test(almost)).toBe(false);
    expect(matcher.test('a'.repeat(10_000))).toBe(true);
  });
});

describe('W5 matchers in dispatch', () => {
  it('W5: matchers are tested against `${identifier}/${apiName}`, unanchored', async () => {
    booted.registry.register('op-1', [
      matched('exact', '^fs/readFile$'),
      matched('api-substring', 'readFile'),
      matched('identifier-prefix', '^fs/'),
      matched('spans-the-slash', 's/r'),
      matched('api-alone-anchored', '^readFile$'),
      matched('identifier-alone-anchored', '^fs$'),
      matched('other-tool', '^web/search$'),
      matched('alternation', '^(web|fs)/(search|read)'),
      matched('empty', ''),
      matched('star', '*'),
      matched('omitted', undefined),
    ]);

    expect(await firedFor('fs', 'readFile')).toEqual([
      'exact',
      'api-substring',
      'identifier-prefix',
      'spans-the-slash',
      'alternation',
      'empty',
      'star',
      'omitted',
    ]);
    expect(await firedFor('web', 'search')).toEqual(['other-tool', 'alternation', 'empty', 'star', 'omitted']);
    expect(await firedFor('xfs', 'readFileSync')).toEqual(['api-substring', 'spans-the-slash', 'empty', 'star', 'omitted']);
  });

  it('W5: matchers apply to afterToolCall and onToolCallError too', async () => {
    booted.registry.register('op-1', [
      matched('after-fs', '^fs/', 'afterToolCall'),
      matched('after-web', '^web/', 'afterToolCall'),
      matched('error-fs', '^fs/', 'onToolCallError'),
      matched('error-web', '^web/', 'onToolCallError'),
    ]);

    await booted.dispatcher.gateToolResult(afterEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }));
    const errorEvent = { ...beforeEvent({ operationId: 'op-1' }), type: 'onToolCallError', error: { type: 'Error', message: 'x' } } as unknown as OnToolCallErrorEvent;
    await booted.dispatcher.dispatch('onToolCallError', errorEvent);

    expect(calls).toEqual(['after-fs', 'error-fs']);
  });

  it('W5: a control whose matcher does not match is not asked (its deny does not apply)', async () => {
    const deny = jest.fn(() => ({ decision: 'deny', reason: 'web only' }));
    booted.registry.register('op-1', [{ id: 'web-policy', type: 'beforeToolCall', matcher: '^web/', onError: 'block', handler: deny }]);

    const gate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', identifier: 'fs', apiName: 'readFile' }));
    expect(gate.verdict).toEqual({ outcome: 'allowed' });
    expect(deny).not.toHaveBeenCalled();

    const webGate = await booted.dispatcher.gateToolCall(beforeEvent({ operationId: 'op-1', identifier: 'web', apiName: 'fetch' }));
    expect(webGate.verdict).toMatchObject({ outcome: 'denied', hookId: 'web-policy' });
  });

  it('W5: environment hooks are filtered by their matcher as well', async () => {
    environment.hooks = [
      envHook({ id: 'env-fs', point: 'beforeToolCall', matcher: '^fs/', handler: () => void calls.push('env-fs') }),
      envHook({ id: 'env-web', point: 'beforeToolCall', matcher: '^web/', handler: () => void calls.push('env-web') }),
    ];
    expect(await firedFor('fs', 'stat')).toEqual(['env-fs']);
  });

  it('W5: `^(a+)+$` against a 10,000-character tool name completes with the right answer', async () => {
    booted.registry.register('op-1', [matched('redos', '^(a+)+$'), matched('redos-slash', '^(a+)+/b$')]);
    const longIdentifier = 'a'.repeat(10_000);

    // `aaaa…a/b` is not all a's; `^(a+)+/b$` matches it exactly; `…/c` matches neither.
    expect(await firedFor(longIdentifier, 'b')).toEqual(['redos-slash']);
    expect(await firedFor(longIdentifier, 'c')).toEqual([]);
  });
});

describe('W5 matchers apply to tool events only', () => {
  it.each(['beforeStep', 'afterStep', 'onComplete', 'onError', 'beforeCompact', 'beforeCallAgent', 'afterHumanIntervention'] as const)(
    'W5: a matcher on %s is rejected at registration',
    (type) => {
      expect(() => booted.registry.register('op-1', [matched('x', '^fs/', type)])).toThrow(HookConfigurationError);
      expect(booted.registry.hasCallerHooks('op-1')).toBe(false);
    },
  );

  it.each(['beforeToolCall', 'afterToolCall', 'onToolCallError'] as const)('W5: a matcher on the tool event %s is accepted', (type) => {
    expect(() => booted.registry.register('op-1', [matched('x', '^fs/', type)])).not.toThrow();
    expect(booted.registry.callerHooks('op-1', type)[0]?.matcher?.source).toBe('^fs/');
  });

  it.each(['(', '[', '+', 'a**', '(?P<name', '\\'])('W5: an invalid pattern %p is rejected at registration, nothing registered', (pattern) => {
    expect(() => booted.registry.register('op-1', [matched('ok', '^fs/'), matched('bad', pattern)])).toThrow(HookConfigurationError);
    expect(booted.registry.hasCallerHooks('op-1')).toBe(false);
  });

  it('W5: a matcher that is not a string is rejected', () => {
    expect(() => booted.registry.register('op-1', [{ ...matched('x', undefined), matcher: 42 as unknown as string }])).toThrow(HookConfigurationError);
  });
});

@Injectable()
class StepMatcher {
  @OnHook('afterStep', { matcher: '^fs/' })
  onStep() {}
}

@Injectable()
class BadPatternDecorator {
  @OnHook('afterToolCall', { matcher: '(unclosed' })
  audit() {}
}

@Injectable()
class FsAudit {
  seen: string[] = [];
  @OnHook('afterToolCall', { matcher: '^fs/readFile$' })
  audit(event: { identifier: string; apiName: string }) {
    this.seen.push(`${event.identifier}/${event.apiName}`);
  }
}

describe('W5 decorator matchers', () => {
  it.each([
    ['a matcher on a non-tool point', StepMatcher],
    ['an invalid pattern', BadPatternDecorator],
  ])('W5: @OnHook with %s fails the bootstrap with HookConfigurationError', async (_label, provider) => {
    await expect(boot({ providers: [provider] })).rejects.toBeInstanceOf(HookConfigurationError);
  });

  it('W5: an @OnHook matcher filters tool events', async () => {
    const app = await boot({ providers: [FsAudit] });
    try {
      await app.dispatcher.gateToolResult(afterEvent({ identifier: 'fs', apiName: 'readFile' }));
      await app.dispatcher.gateToolResult(afterEvent({ identifier: 'fs', apiName: 'writeFile' }));
      expect(app.moduleRef.get(FsAudit).seen).toEqual(['fs/readFile']);
    } finally {
      await app.moduleRef.close();
    }
  });
});
