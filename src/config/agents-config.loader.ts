/**
 * Loads `config/agents.yaml` (DESIGN §8): YAML with line tracking, the strict schema, then the cross
 * references. All problems of a file are reported together, sorted by line, each naming file, line and key
 * path and never a value (`AgentsConfigError`); a literal secret anywhere fails the load (`secret-scanner.ts`).
 * `hooks:` is passed on raw with its line.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { AgentsConfigError, formatKeyPath, type ConfigIssue, type KeyPath } from './config-error.js';
import type { AgentsConfig } from './agents-config.js';
import { referenceProblems } from './agents-config.references.js';
import { agentsConfigSchema } from './agents-config.schema.js';
import { scanForSecrets } from './secret-scanner.js';
import { parseYamlSource, type YamlSource } from './yaml-source.js';

export async function loadAgentsConfig(file: string): Promise<AgentsConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw unreadable(file, error);
  }
  return parseAgentsConfig(text, file);
}

export function loadAgentsConfigSync(file: string): AgentsConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw unreadable(file, error);
  }
  return parseAgentsConfig(text, file);
}

/** Parses config text; `file` only names the source in errors and in `config.source`. */
export function parseAgentsConfig(text: string, file: string): AgentsConfig {
  const source = parseYamlSource(text, file);
  const issue = (path: KeyPath, message: string): ConfigIssue => ({ file, line: source.lineOf(path), path: formatKeyPath(path), message });

  if (typeof source.data !== 'object' || source.data === null || Array.isArray(source.data)) {
    throw new AgentsConfigError([issue([], 'the file must be a mapping with at least `system:`')]);
  }
  const protoPaths = protoKeyPaths(source.data, []);
  if (protoPaths.length > 0) throw fail(protoPaths.map((path) => issue(path, 'the key "__proto__" is not allowed')));

  const parsed = agentsConfigSchema.safeParse(source.data);
  if (!parsed.success) throw fail(firstPerPath(parsed.error.issues.flatMap((zodIssue) => describe(zodIssue, source))).map(({ path, message }) => issue(path, message)));
  const problems = referenceProblems(parsed.data);
  if (problems.length > 0) throw fail(problems.map(({ path, message }) => issue(path, message)));
  // Last, over the whole document: a file that breaks a rule above is reported for that first.
  const secrets = scanForSecrets(source);
  if (secrets.length > 0) throw fail(secrets);

  const { hooks, ...body } = parsed.data;
  return {
    ...body,
    ...('hooks' in (source.data as object) ? { hooks: { data: hooks, line: source.lineOf(['hooks']) } } : {}),
    source: { file, data: source.data, lineOf: source.lineOf },
  };
}

/** zod may report a wrong type and then a check on the same value; the first says it best. */
function firstPerPath(problems: { path: KeyPath; message: string }[]): { path: KeyPath; message: string }[] {
  const seen = new Set<string>();
  return problems.filter(({ path }) => {
    const key = JSON.stringify(path);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function fail(issues: ConfigIssue[]): AgentsConfigError {
  return new AgentsConfigError([...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
}

function unreadable(file: string, error: unknown): AgentsConfigError {
  const code = (error as { code?: unknown } | null)?.code;
  const why = typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? ` (${code})` : '';
  return new AgentsConfigError([{ file, path: '', message: `cannot read the config file${why}` }]);
}

/**
 * zod issues as ours: an unknown key is reported at the key itself (its own line), a missing field as
 * "is required", the rest with zod's messages, which name types and options but never the input.
 */
function describe(zodIssue: z.core.$ZodIssue, source: YamlSource): { path: KeyPath; message: string }[] {
  const path = zodIssue.path.filter((key): key is string | number => typeof key !== 'symbol');
  switch (zodIssue.code) {
    case 'unrecognized_keys':
      return zodIssue.keys.map((key) => ({ path: [...path, key], message: 'unknown key' }));
    case 'invalid_key':
      return [{ path, message: zodIssue.issues[0]?.message ?? 'invalid key' }];
    case 'invalid_union': {
      const options = (zodIssue as { options?: unknown }).options;
      if (Array.isArray(options)) return [{ path, message: `must be one of: ${options.join(', ')}` }];
      return [{ path, message: 'does not match any allowed form' }];
    }
    case 'invalid_type': {
      const missing = valueAt(source.data, path) === undefined;
      return [{ path, message: missing ? `is required (${expected(zodIssue.expected)})` : `must be ${expected(zodIssue.expected)}` }];
    }
    default:
      return [{ path, message: zodIssue.message }];
  }
}

function expected(type: string): string {
  switch (type) {
    case 'object':
    case 'record':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'int':
      return 'an integer';
    case 'number':
      // zod also rejects .inf and .nan as numbers; say so.
      return 'a finite number';
    default:
      return `a ${type}`;
  }
}

function valueAt(data: unknown, path: KeyPath): unknown {
  let value = data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

/** Own `__proto__` keys anywhere: copying such an object would replace a prototype instead of a field. */
function protoKeyPaths(value: unknown, path: KeyPath): KeyPath[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => protoKeyPaths(item, [...path, index]));
  if (typeof value !== 'object' || value === null) return [];
  return Object.keys(value).flatMap((key) =>
    key === '__proto__' ? [[...path, key]] : protoKeyPaths((value as Record<string, unknown>)[key], [...path, key]),
  );
}
