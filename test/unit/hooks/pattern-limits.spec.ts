/**
 * SPEC G6 for matchers and `approval` / `deferred` patterns: at most 1,024 characters, a compiled-size
 * budget per pattern and per registration, estimated from the text before re2js compiles anything; every
 * refusal names the field (hooks[i].matcher, file:line key) and never echoes the pattern.
 */
import { RE2JS } from 're2js';
import { parseAgentsConfig } from '../../../src/config/agents-config.loader.js';
import { AgentsConfigError } from '../../../src/config/config-error.js';
import { parseHooksSection } from '../../../src/config/hooks-section.js';
import { HookConfigurationError } from '../../../src/hooks/hook-errors.js';
import { HookRegistry } from '../../../src/hooks/hook-registry.js';
import { MAX_IDENTIFIER_LENGTH, MAX_PATTERN_LENGTH, MAX_REGISTRATION_PROGRAM_SIZE } from '../../../src/hooks/input-limits.js';
import { compileMatcher } from '../../../src/hooks/matcher.js';
import { estimateProgramSize } from '../../../src/hooks/pattern-size.js';

const FILE = 'config/agents.yaml';
const MARK = 'DISTINCTIVE';
/** Fits the per-pattern budget (~4,000 instructions); five of them exceed the registration's. */
const HEAVY = 'a{1000}'.repeat(4);
/** 1,022 characters, ~146,000 instructions once `{1000}` is expanded: seconds of CPU on main. */
const EXPLOSIVE = 'a{1000}'.repeat(146);

function caught(work: () => unknown): Error {
  try {
    work();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

describe('G6 compiled-size estimate', () => {
  const corpus = [
    '^fs/readFile$', '^fs/(read|write)File$', 'a{1000}', '(ab){3,7}', '[a-z]+', '(?i)^clock/', '\\pL{100}', '\\p{Greek}{20}', 'x*?',
    '(a|b|c){10,}', '[]a]{50}', '\\Qa{99}\\E{3}', '(?:a{10}){10}', '^(a+)+$', '.*', '(?P<n>a){5}', '(?<n>b){5}', '[[:alpha:]]{20}', 'a{2,}',
    'ab{0,1000}', '[^\\]x]{30}', '\\x{41}{40}', '(?s:.){64}', 'a|b|c|d|e', '((((x))))', '(?i:ABC){9}', '\\d{3}-\\d{4}', 'a{,5}', 'a{5',
    Array.from({ length: 100 }, (_, i) => `tool${i}/x`).join('|'), 'y'.repeat(MAX_PATTERN_LENGTH), HEAVY,
  ];

  it.each(corpus)('G6: the estimate of %p is never below re2js’s program size', (pattern) => {
    expect(estimateProgramSize(pattern)).toBeGreaterThanOrEqual(RE2JS.compile(pattern).programSize());
  });

  it('G6: nested and unclosed groups are estimated without recursion', () => {
    expect(estimateProgramSize(`${'('.repeat(1000)}a${')'.repeat(1000)}`)).toBeGreaterThan(1000);
    // Unclosed groups still count (a syntax error re2js reports later): 500 captures around 1,000 literals.
    expect(estimateProgramSize(`${'('.repeat(500)}a{1000}`)).toBeGreaterThanOrEqual(2000);
  });
});

describe('G6 matcher limits at registration', () => {
  it('G6: a matcher over 1,024 characters is refused naming the field, never echoing it', () => {
    const error = caught(() => compileMatcher(`^${MARK}/${'x'.repeat(MAX_PATTERN_LENGTH)}`, 'hooks[2] (audit)'));
    expect(error).toBeInstanceOf(HookConfigurationError);
    expect(error.message).toBe(`hooks[2] (audit): matcher: must be at most ${MAX_PATTERN_LENGTH} characters`);
  });

  it('G6: a short pattern that would compile to a huge program is refused from its text', () => {
    const error = caught(() => compileMatcher(EXPLOSIVE, 'hooks[0]'));
    expect(error).toBeInstanceOf(HookConfigurationError);
    expect(error.message).toContain('hooks[0]: matcher: compiles to too large a program');
    expect(error.message).not.toContain('a{1000}a{1000}');
  });

  it('G6: an invalid matcher is refused without echoing the pattern', () => {
    const error = caught(() => compileMatcher(`(${MARK}`, 'hooks[0]'));
    expect(error.message).toMatch(/^hooks\[0\]: matcher: invalid regular expression/);
    expect(error.message).not.toContain(MARK);
  });

  it('G6: one operation’s matchers share a budget: the hook past it is named, nothing is registered', () => {
    const registry = new HookRegistry();
    const hook = (id: string) => ({ id, type: 'beforeToolCall' as const, matcher: HEAVY, handler: () => undefined });
    const error = caught(() => registry.register('op-1', ['h0', 'h1', 'h2', 'h3', 'h4'].map(hook)));
    expect(error).toBeInstanceOf(HookConfigurationError);
    expect(error.message).toBe(`hooks[4]: matcher: the patterns of this registration together compile to too large a program (over ${MAX_REGISTRATION_PROGRAM_SIZE} instructions)`);
    expect(registry.operationCount).toBe(0);
    // The budget is per registration: another operation starts from zero.
    expect(registry.register('op-2', ['h0', 'h1', 'h2', 'h3'].map(hook))).toHaveLength(4);
    expect(registry.register('op-3', ['h0', 'h1', 'h2', 'h3'].map(hook))).toHaveLength(4);
  });
});

describe('G6 pattern limits in agents.yaml', () => {
  const agent = (lines: string) => `system: s\nmodels: { m: { provider: scripted, script: [] } }\nagents:\n  a:\n    model: m\n${lines}`;

  function issues(text: string): { line: number | undefined; path: string; message: string }[] {
    const error = caught(() => parseHooksSection(parseAgentsConfig(text, FILE)));
    expect(error).toBeInstanceOf(AgentsConfigError);
    expect(error.message).not.toContain(MARK);
    expect(error.message).not.toContain('a{1000}a{1000}');
    return (error as AgentsConfigError).issues.map(({ line, path, message }) => ({ line, path, message }));
  }

  it('G6: an approval pattern over 1,024 characters is a configuration error naming file, line and key', () => {
    expect(issues(agent(`    approval: [ "^ok/", "${MARK}${'x'.repeat(MAX_PATTERN_LENGTH)}" ]\n`))).toEqual([
      { line: 6, path: 'agents.a.approval[1]', message: `must be at most ${MAX_PATTERN_LENGTH} characters` },
    ]);
  });

  it('G6: a deferred pattern over the compiled-size budget, and an agent over its budget, are named', () => {
    expect(issues(agent(`    deferred: [ "${EXPLOSIVE}" ]\n`))).toEqual([{ line: 6, path: 'agents.a.deferred[0]', message: expect.stringContaining('compiles to too large a program') }]);
    const five = Array.from({ length: 5 }, () => `"${HEAVY}"`).join(', ');
    expect(issues(agent(`    approval: [ ${five} ]\n`))).toEqual([
      { line: 6, path: 'agents.a.approval[4]', message: expect.stringContaining('the patterns of this registration together') },
    ]);
  });

  it('G6: a hook ref longer than the identifier limit (it is the hook id) names file, line and key', () => {
    const text = `system: s\nhooks:\n  afterStep:\n    - { ref: "plugins/${'p'.repeat(MAX_IDENTIFIER_LENGTH)}:f" }\n`;
    expect(issues(text)).toEqual([{ line: 4, path: 'hooks.afterStep[0].ref', message: `must be at most ${MAX_IDENTIFIER_LENGTH} characters (the hook id)` }]);
  });

  it('G6: a hooks-section matcher over the limits names file, line and key', () => {
    const text = `system: s\nhooks:\n  beforeToolCall:\n    - { ref: "m:f", matcher: "${EXPLOSIVE}" }\n`;
    expect(issues(text)).toEqual([{ line: 4, path: 'hooks.beforeToolCall[0].matcher', message: expect.stringContaining('compiles to too large a program') }]);
  });
});
