/**
 * Validates the `hooks:` section of agents.yaml (SPEC E4, DESIGN §8). Each point of either family takes a
 * list of entries, each `plugin` + `method` or `ref: "module/path:export"` (never both), with
 * `failure_policy: fail | warn` on engine-family entries, `onError: continue | block` on the agent-family
 * controls (`beforeToolCall`, `afterToolCall`) and an optional `matcher` on tool points. Hooks take no
 * `config:` block: they read their values in code. All problems are reported together, each naming file,
 * line and key path, never a value. Resolving plugins and modules is `config-hooks.loader.ts`'s job.
 */
import { RE2JS } from 're2js';
import type { FailurePolicy, OnErrorPolicy } from '../hooks/agent-hook.js';
import { HOOK_POINT_NAMES, HOOK_POINTS, isControlPoint, isHookPoint, type HookPoint } from '../hooks/hook-points.js';
import { compileMatcher, type ToolMatcher } from '../hooks/matcher.js';
import { matcherScopeProblem } from '../hooks/matcher-scope.js';
import { patternLimitProblem } from '../hooks/pattern-budget.js';
import { MAX_IDENTIFIER_LENGTH } from '../hooks/input-limits.js';
import type { AgentsConfig } from './agents-config.js';
import { CONFIG_ID } from './agents-config.schema.js';
import { AgentsConfigError, formatKeyPath, type ConfigIssue, type KeyPath } from './config-error.js';
import { IDENTIFIER, parseModuleReference, type ModuleReference } from './module-reference.js';

export type HookEntryTarget =
  | { readonly kind: 'plugin'; readonly plugin: string; readonly method: string }
  | ({ readonly kind: 'ref'; readonly ref: string } & ModuleReference);

/** One valid entry of `hooks:`, in file order. */
export interface HookEntry {
  readonly point: HookPoint;
  /** Position in its point's list. */
  readonly index: number;
  readonly target: HookEntryTarget;
  readonly failurePolicy?: FailurePolicy;
  readonly onError?: OnErrorPolicy;
  readonly matcher?: ToolMatcher;
  /** `['hooks', point, index]`: the entry, for errors found while resolving it. */
  readonly path: KeyPath;
}

const ENTRY_KEYS = ['plugin', 'method', 'ref', 'failure_policy', 'onError', 'matcher'] as const;
/** Spellings of the other convention, pointed at the right key instead of a bare "unknown key". */
const RENAMED: Readonly<Record<string, string>> = { failurePolicy: 'failure_policy', 'failure-policy': 'failure_policy', on_error: 'onError', 'on-error': 'onError' };
const CONFIG_BLOCK =
  'hooks take no `config:` block: a hook reads its values in code, from environment variables or the RunContext (SPEC E4)';

/** The validated entries; throws `AgentsConfigError` with every problem of the section. */
export function parseHooksSection(config: Pick<AgentsConfig, 'hooks' | 'source'>): HookEntry[] {
  const { file, lineOf } = config.source;
  const issues: ConfigIssue[] = [];
  const reporter: Reporter = {
    report: (path, message) => issues.push({ file, line: lineOf(path), path: formatKeyPath(path), message }),
    count: () => issues.length,
  };
  const { report } = reporter;
  const entries: HookEntry[] = [];
  const data = config.hooks?.data;
  // An empty `hooks:` (everything commented out) is YAML null: no hooks.
  if (data === undefined || data === null) return entries;
  if (!isMapping(data)) {
    report(['hooks'], 'must be a mapping of hook points to lists of entries');
    throw new AgentsConfigError(issues);
  }
  for (const [point, list] of Object.entries(data)) {
    const pointPath: KeyPath = ['hooks', point];
    if (point === 'config') {
      report(pointPath, CONFIG_BLOCK);
      continue;
    }
    if (!isHookPoint(point)) {
      report(pointPath, `unknown hook point (valid points: ${HOOK_POINT_NAMES.join(', ')})`);
      continue;
    }
    if (list === null) continue; // `on_run_end:` with every entry commented out
    if (!Array.isArray(list)) {
      report(pointPath, 'must be a list of entries');
      continue;
    }
    list.forEach((raw, index) => {
      const entry = parseEntry(point, index, raw, reporter);
      if (entry) entries.push(entry);
    });
  }
  if (issues.length > 0) throw new AgentsConfigError([...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  return entries;
}

interface Reporter {
  report(path: KeyPath, message: string): void;
  /** How many problems have been reported so far. */
  count(): number;
}

function parseEntry(point: HookPoint, index: number, raw: unknown, { report, count }: Reporter): HookEntry | undefined {
  const path: KeyPath = ['hooks', point, index];
  if (!isMapping(raw)) {
    report(path, 'must be a mapping: { plugin, method } or { ref }');
    return undefined;
  }
  const spec = HOOK_POINTS[point];
  const at = (key: string): KeyPath => [...path, key];
  const before = count();
  for (const key of Object.keys(raw)) {
    if (key === 'config') report(at(key), CONFIG_BLOCK);
    else if (!(ENTRY_KEYS as readonly string[]).includes(key)) {
      const renamed = RENAMED[key];
      report(at(key), renamed ? `unknown key (did you mean ${renamed}?)` : `unknown key (allowed: ${ENTRY_KEYS.join(', ')})`);
    }
  }

  const { plugin, method, ref, failure_policy: failurePolicy, onError, matcher } = raw;
  let target: HookEntryTarget | undefined;
  if (plugin !== undefined && ref !== undefined) {
    report(at('ref'), 'an entry takes either `plugin` + `method` or `ref`, not both');
  } else if (plugin !== undefined) {
    if (typeof plugin !== 'string' || !CONFIG_ID.test(plugin)) report(at('plugin'), 'must be a plugin id: letters, digits, "_" and "-", at most 64 characters');
    if (method === undefined) report(path, '`plugin` needs `method`: the name of the plugin method to call');
    else if (typeof method !== 'string' || !IDENTIFIER.test(method)) report(at('method'), 'must be a method name (a JavaScript identifier)');
    // G6: `plugin.method` is the hook id, stored in varchar(255) columns.
    else if (typeof plugin === 'string' && plugin.length + 1 + method.length > MAX_IDENTIFIER_LENGTH) report(at('method'), `with the plugin id must be at most ${MAX_IDENTIFIER_LENGTH} characters (the hook id)`);
    if (typeof plugin === 'string' && typeof method === 'string') target = { kind: 'plugin', plugin, method };
  } else if (ref !== undefined) {
    if (method !== undefined) report(at('method'), '`method` goes with `plugin`; a `ref` names its function itself ("module/path:Class.method")');
    const parsed =
      typeof ref !== 'string'
        ? 'must be a string "module/path:export"'
        : // G6: the ref is the hook id, stored in varchar(255) columns.
          ref.length > MAX_IDENTIFIER_LENGTH
          ? `must be at most ${MAX_IDENTIFIER_LENGTH} characters (the hook id)`
          : parseModuleReference(ref, true);
    if (typeof parsed === 'string') report(at('ref'), parsed);
    else target = { kind: 'ref', ref: ref as string, ...parsed };
  } else {
    report(path, 'needs `plugin` + `method` or `ref: "module/path:export"`');
  }

  if (failurePolicy !== undefined) {
    if (spec.family !== 'engine') report(at('failure_policy'), `failure_policy applies to engine-family points; ${point} takes onError (beforeToolCall/afterToolCall, beforeModelCall/afterModelCall only)`);
    else if (failurePolicy !== 'fail' && failurePolicy !== 'warn') report(at('failure_policy'), 'must be one of: fail, warn');
  }
  if (onError !== undefined) {
    if (spec.family !== 'agent') report(at('onError'), `onError applies to the agent-family controls beforeToolCall/afterToolCall, beforeModelCall/afterModelCall; ${point} takes failure_policy`);
    else if (!isControlPoint(point)) report(at('onError'), `onError applies to the controls beforeToolCall/afterToolCall, beforeModelCall/afterModelCall only, not ${point}`);
    else if (onError !== 'continue' && onError !== 'block') report(at('onError'), 'must be one of: continue, block');
  }
  let compiled: ToolMatcher | undefined;
  if (matcher !== undefined) {
    const problem = matcherScopeProblem(point, matcher) ?? matcherProblem(matcher);
    if (problem !== undefined) report(at('matcher'), problem);
    else compiled = compileMatcher(matcher as string, formatKeyPath(at('matcher')));
  }

  if (count() !== before || target === undefined) return undefined;
  return {
    point,
    index,
    target,
    ...(failurePolicy !== undefined ? { failurePolicy: failurePolicy as FailurePolicy } : {}),
    ...(onError !== undefined ? { onError: onError as OnErrorPolicy } : {}),
    ...(compiled ? { matcher: compiled } : {}),
    path,
  };
}

/** Like tool matchers elsewhere (hooks/matcher.ts): on a tool point `''` and `*` match every tool. */
function matcherProblem(matcher: unknown): string | undefined {
  if (typeof matcher !== 'string') return 'must be a string (a regular expression over "identifier/apiName")';
  if (matcher === '' || matcher === '*') return undefined;
  // G6: length and compiled size from the text, before re2js pays for a huge program.
  const limit = patternLimitProblem(matcher);
  if ('problem' in limit) return limit.problem;
  try {
    RE2JS.compile(matcher);
    return undefined;
  } catch (error) {
    // re2js's `error` field is the reason alone; its message would quote the pattern.
    const reason = (error as { error?: unknown }).error;
    return `invalid regular expression${typeof reason === 'string' ? ` (${reason})` : ''}`;
  }
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
