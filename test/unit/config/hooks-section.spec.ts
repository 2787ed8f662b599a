/**
 * Issue 6 item 1, SPEC E4, DESIGN §8: validation of the `hooks:` section of agents.yaml. Every rule, valid
 * and invalid, each error naming file, line and key path; no value ever echoed.
 */
import { parseAgentsConfig } from '../../../src/config/agents-config.loader.js';
import { AgentsConfigError, type ConfigIssue } from '../../../src/config/config-error.js';
import { parseHooksSection, type HookEntry } from '../../../src/config/hooks-section.js';
import { HOOK_POINT_NAMES } from '../../../src/hooks/hook-points.js';

const FILE = 'config/agents.yaml';
const MARK = 'DISTINCTIVE';

/** `hooks:` starts on line 2; the first entry of the first point is on line 4. */
function yaml(hooks: string): string {
  return `system: s\nhooks:\n${hooks}`;
}

function entries(hooks: string): HookEntry[] {
  return parseHooksSection(parseAgentsConfig(yaml(hooks), FILE));
}

function rejection(hooks: string): AgentsConfigError {
  const config = parseAgentsConfig(yaml(hooks), FILE);
  let caught: unknown;
  try {
    parseHooksSection(config);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AgentsConfigError);
  const error = caught as AgentsConfigError;
  expect(error.message).not.toContain(MARK);
  for (const issue of error.issues) expect(issue.file).toBe(FILE);
  return error;
}

function single(hooks: string, line: number, path: string, fragment: string): ConfigIssue {
  const error = rejection(hooks);
  expect(error.issues.map((issue) => ({ line: issue.line, path: issue.path }))).toEqual([{ line, path }]);
  expect(error.issues[0]!.message).toContain(fragment);
  expect(error.message).toBe(`${FILE}:${line} ${path}: ${error.issues[0]!.message}`);
  return error.issues[0]!;
}

describe('E4 hooks: valid sections', () => {
  it('no section, an empty section and an empty point are no hooks', () => {
    expect(parseHooksSection(parseAgentsConfig('system: s\n', FILE))).toEqual([]);
    expect(entries('')).toEqual([]);
    expect(entries('  on_run_end:\n')).toEqual([]);
    expect(entries('  on_run_end: []\n')).toEqual([]);
  });

  it('K1: the model-call points take entries — transforms with failure_policy, controls with onError; a matcher stays a tool-point key', () => {
    const found = entries(
      [
        '  before_model_request:',
        '    - { plugin: pii, method: redact, failure_policy: fail }',
        '  after_model_response:',
        '    - { ref: "plugins/hooks/mask:mask", failure_policy: warn }',
        '  afterModelCall:',
        '    - { ref: "plugins/hooks/guard:guard", onError: block }',
        '  onModelCallError:',
        '    - { ref: "plugins/hooks/audit:record" }',
        '',
      ].join('\n'),
    );
    expect(found.map(({ point, failurePolicy, onError }) => ({ point, failurePolicy, onError }))).toEqual([
      { point: 'before_model_request', failurePolicy: 'fail', onError: undefined },
      { point: 'after_model_response', failurePolicy: 'warn', onError: undefined },
      { point: 'afterModelCall', failurePolicy: undefined, onError: 'block' },
      { point: 'onModelCallError', failurePolicy: undefined, onError: undefined },
    ]);
    single('  onModelCallError:\n    - { ref: "m:f", onError: block }\n', 4, 'hooks.onModelCallError[0].onError', 'not onModelCallError');
    single('  beforeModelCall:\n    - { ref: "m:f", matcher: "^fs/" }\n', 4, 'hooks.beforeModelCall[0].matcher', '');
  });

  it('both families, plugin + method and ref forms, in file order, with their paths', () => {
    const found = entries(
      [
        '  after_tool_call:',
        '    - { plugin: audit_hooks, method: auditToolCall, failure_policy: warn }',
        '    - { ref: "plugins/hooks/audit:record" }',
        '  beforeToolCall:',
        '    - { ref: "plugins/hooks/policy:Policy.deny", onError: block, matcher: "^fs/" }',
        '  on_engine_start:',
        '    - plugin: research-hooks',
        '      method: validate_environment',
        '      failure_policy: fail',
        '',
      ].join('\n'),
    );
    expect(found.map(({ matcher, ...rest }) => ({ ...rest, matcher: matcher?.source }))).toEqual([
      { point: 'after_tool_call', index: 0, target: { kind: 'plugin', plugin: 'audit_hooks', method: 'auditToolCall' }, failurePolicy: 'warn', path: ['hooks', 'after_tool_call', 0], matcher: undefined },
      { point: 'after_tool_call', index: 1, target: { kind: 'ref', ref: 'plugins/hooks/audit:record', modulePath: 'plugins/hooks/audit', exportName: 'record' }, path: ['hooks', 'after_tool_call', 1], matcher: undefined },
      {
        point: 'beforeToolCall',
        index: 0,
        target: { kind: 'ref', ref: 'plugins/hooks/policy:Policy.deny', modulePath: 'plugins/hooks/policy', exportName: 'Policy', member: 'deny' },
        onError: 'block',
        path: ['hooks', 'beforeToolCall', 0],
        matcher: '^fs/',
      },
      { point: 'on_engine_start', index: 0, target: { kind: 'plugin', plugin: 'research-hooks', method: 'validate_environment' }, failurePolicy: 'fail', path: ['hooks', 'on_engine_start', 0], matcher: undefined },
    ]);
  });

  it('failure_policy is optional (the loader defaults it to fail) and onError too', () => {
    const [engine, agent] = entries('  on_run_end:\n    - { plugin: p, method: m }\n  afterToolCall:\n    - { plugin: p, method: m }\n');
    expect(engine!.failurePolicy).toBeUndefined();
    expect(agent!.onError).toBeUndefined();
  });

  it('a matcher compiles on every tool point of both families; "" and "*" match every tool there', () => {
    const tools = ['before_tool_call', 'after_tool_call', 'transform_tool_result', 'on_tool_error', 'beforeToolCall', 'afterToolCall', 'onToolCallError'];
    const found = entries(tools.map((point) => `  ${point}:\n    - { ref: "m:f", matcher: "^fs/(read|write)$" }\n`).join(''));
    expect(found).toHaveLength(tools.length);
    for (const entry of found) {
      expect(entry.matcher?.test('fs/read')).toBe(true);
      expect(entry.matcher?.test('clock/now')).toBe(false);
    }
    const open = entries('  after_tool_call:\n    - { ref: "m:f", matcher: "*" }\n  beforeToolCall:\n    - { ref: "m:f", matcher: "" }\n');
    expect(open.map((entry) => entry.matcher)).toEqual([undefined, undefined]);
  });

  it.each(['""', '"*"', 'null', '"^fs/"'])("W5: a matcher key on a non-tool point is refused at registration, even %s", (value) => {
    const yaml = `  on_run_end:\n    - { ref: "m:f", matcher: ${value} }\n  beforeStep:\n    - { ref: "m:f", matcher: ${value} }\n`;
    const error = rejection(yaml);
    expect(error.issues.map((issue) => [issue.path, issue.line])).toEqual([
      ['hooks.on_run_end[0].matcher', 4],
      ['hooks.beforeStep[0].matcher', 6],
    ]);
    for (const issue of error.issues) expect(issue.message).toContain('tool points only');
  });

  it('every one of the 27 points of either family is accepted', () => {
    const found = entries(HOOK_POINT_NAMES.map((point) => `  ${point}:\n    - { ref: "m:f" }\n`).join(''));
    expect(found.map((entry) => entry.point)).toEqual([...HOOK_POINT_NAMES]);
  });
});

describe('E4 hooks: rejected entries name file, line and key path', () => {
  it('an unknown point, with the list of valid ones', () => {
    const issue = single('  on_tool_start:\n    - { ref: "m:f" }\n', 3, 'hooks.on_tool_start', 'unknown hook point');
    expect(issue.message).toContain(`valid points: ${HOOK_POINT_NAMES.join(', ')}`);
  });

  it('a config: block, in an entry or as a point, says hooks read their values in code', () => {
    const issue = single(`  on_run_end:\n    - plugin: p\n      method: m\n      config: { url: "${MARK}" }\n`, 6, 'hooks.on_run_end[0].config', 'no `config:` block');
    expect(issue.message).toContain('environment variables or the RunContext');
    single(`  config:\n    retries: ${MARK}\n`, 3, 'hooks.config', 'environment variables or the RunContext');
  });

  it('plugin and ref together', () => {
    single('  on_run_end:\n    - plugin: p\n      method: m\n      ref: "x:y"\n', 6, 'hooks.on_run_end[0].ref', 'either `plugin` + `method` or `ref`, not both');
  });

  it('neither plugin nor ref; plugin without method; method with ref', () => {
    single('  on_run_end:\n    - { failure_policy: warn }\n', 4, 'hooks.on_run_end[0]', 'needs `plugin` + `method` or `ref');
    single('  on_run_end:\n    - { plugin: p }\n', 4, 'hooks.on_run_end[0]', '`plugin` needs `method`');
    single('  on_run_end:\n    - ref: "m:f"\n      method: g\n', 5, 'hooks.on_run_end[0].method', '`method` goes with `plugin`');
  });

  it('a plugin id must be an id and a method an identifier, neither echoed', () => {
    single(`  on_run_end:\n    - { plugin: "${MARK} x", method: m }\n`, 4, 'hooks.on_run_end[0].plugin', 'must be a plugin id');
    single(`  on_run_end:\n    - plugin: p\n      method: "${MARK}-x"\n`, 5, 'hooks.on_run_end[0].method', 'a JavaScript identifier');
    single('  on_run_end:\n    - { plugin: [ p ], method: m }\n', 4, 'hooks.on_run_end[0].plugin', 'must be a plugin id');
  });

  it('a ref must be "module/path:export" or "module/path:Class.method", never echoed', () => {
    for (const bad of [`${MARK}`, `:${MARK}`, `m:${MARK}-x`, `m:A.b.${MARK}`, `m:A.${MARK}-x`, `m:`]) {
      single(`  on_run_end:\n    - ref: "${bad}"\n`, 4, 'hooks.on_run_end[0].ref', 'must be "module/path:export" or "module/path:Class.method"');
    }
    single('  on_run_end:\n    - ref: 42\n', 4, 'hooks.on_run_end[0].ref', 'must be a string');
  });

  it('failure_policy only on engine-family entries, and only fail | warn', () => {
    single('  afterToolCall:\n    - { ref: "m:f", failure_policy: warn }\n', 4, 'hooks.afterToolCall[0].failure_policy', 'failure_policy applies to engine-family points; afterToolCall takes onError');
    single(`  on_run_end:\n    - { ref: "m:f", failure_policy: ${MARK} }\n`, 4, 'hooks.on_run_end[0].failure_policy', 'must be one of: fail, warn');
  });

  it('onError only on the agent-family controls beforeToolCall / afterToolCall, and only continue | block', () => {
    single('  after_tool_call:\n    - { ref: "m:f", onError: block }\n', 4, 'hooks.after_tool_call[0].onError', 'after_tool_call takes failure_policy');
    single('  beforeStep:\n    - { ref: "m:f", onError: block }\n', 4, 'hooks.beforeStep[0].onError', 'controls beforeToolCall/afterToolCall, beforeModelCall/afterModelCall only, not beforeStep');
    single('  onToolCallError:\n    - { ref: "m:f", onError: continue }\n', 4, 'hooks.onToolCallError[0].onError', 'not onToolCallError');
    single(`  beforeToolCall:\n    - { ref: "m:f", onError: ${MARK} }\n`, 4, 'hooks.beforeToolCall[0].onError', 'must be one of: continue, block');
  });

  it('a matcher only on tool points; a bad regex is reported without the pattern', () => {
    single('  on_run_end:\n    - { ref: "m:f", matcher: "^fs/" }\n', 4, 'hooks.on_run_end[0].matcher', 'a matcher applies to tool points only, not on_run_end');
    single('  beforeStep:\n    - { ref: "m:f", matcher: "^fs/" }\n', 4, 'hooks.beforeStep[0].matcher', 'tool points only');
    const issue = single(`  after_tool_call:\n    - { ref: "m:f", matcher: "(${MARK}" }\n`, 4, 'hooks.after_tool_call[0].matcher', 'invalid regular expression');
    expect(issue.message).toMatch(/\(missing closing \)\)/);
    single('  after_tool_call:\n    - { ref: "m:f", matcher: 3 }\n', 4, 'hooks.after_tool_call[0].matcher', 'must be a string');
  });

  it('unknown keys, with a pointer to the right spelling of the other convention', () => {
    single('  on_run_end:\n    - { ref: "m:f", failurePolicy: warn }\n', 4, 'hooks.on_run_end[0].failurePolicy', 'did you mean failure_policy?');
    single('  beforeToolCall:\n    - { ref: "m:f", on_error: block }\n', 4, 'hooks.beforeToolCall[0].on_error', 'did you mean onError?');
    single('  on_run_end:\n    - { ref: "m:f", timeout: 5 }\n', 4, 'hooks.on_run_end[0].timeout', 'unknown key (allowed: plugin, method, ref, failure_policy, onError, matcher)');
  });

  it('shapes: hooks must be a mapping, a point a list, an entry a mapping', () => {
    single('  - { ref: "m:f" }\n', 2, 'hooks', 'must be a mapping');
    single('  on_run_end: { ref: "m:f" }\n', 3, 'hooks.on_run_end', 'must be a list of entries');
    single(`  on_run_end:\n    - "${MARK}:f"\n`, 4, 'hooks.on_run_end[0]', 'must be a mapping');
  });

  it('every problem of the section at once, sorted by line; valid entries around them do not hide them', () => {
    const error = rejection(
      [
        '  on_run_end:',
        '    - { ref: "m:f" }',
        '    - { ref: "m:f", onError: block }',
        '  not_a_point: []',
        '  beforeToolCall:',
        '    - { plugin: p, ref: "m:f", failure_policy: warn }',
        '',
      ].join('\n'),
    );
    expect(error.issues.map((issue) => `${issue.line} ${issue.path}`)).toEqual([
      '5 hooks.on_run_end[1].onError',
      '6 hooks.not_a_point',
      '8 hooks.beforeToolCall[0].ref',
      '8 hooks.beforeToolCall[0].failure_policy',
    ]);
  });
});
