/**
 * Header templates (W6, S2): header values such as `Bearer ${HOOK_TOKEN}` are stored as templates and
 * expanded only at send time, only from variables the hook lists in `allowedEnvVars`. Every error names the
 * header or variable and never a value, not even part of one: a template may hold a literal secret and an
 * expanded value always does.
 */
import { HookConfigurationError } from '../hooks/hook-errors.js';
import { headerLabel, headerNameProblem, headerValueProblem } from './header-policy.js';
import { WebhookError } from './webhook-error.js';

/** An environment variable name, as `allowedEnvVars` entries and `${…}` placeholders must spell it. */
export const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type TemplatePart = { readonly literal: string } | { readonly variable: string };

/** A template split into literal text and `${NAME}` placeholders, or why it is malformed. */
function parseTemplate(template: string): TemplatePart[] | string {
  const parts: TemplatePart[] = [];
  let from = 0;
  for (;;) {
    const open = template.indexOf('${', from);
    if (open < 0) break;
    const close = template.indexOf('}', open + 2);
    if (close < 0) return 'has an unterminated ${ placeholder';
    const name = template.slice(open + 2, close);
    if (!ENV_VAR_NAME.test(name)) return 'has a malformed ${…} placeholder (expected ${NAME} with NAME like HOOK_TOKEN)';
    if (open > from) parts.push({ literal: template.slice(from, open) });
    parts.push({ variable: name });
    from = close + 1;
  }
  if (from < template.length) parts.push({ literal: template.slice(from) });
  return parts;
}

interface CheckedHeader {
  readonly name: string;
  readonly parts: readonly TemplatePart[];
  /**
   * The value of a template without placeholders. It was checked as a template (characters, no `${`),
   * and expanding it changes nothing, so it is sent as it is, without a second check per send.
   */
  readonly constant: string | undefined;
}

/**
 * The checks that need no environment: names, forbidden headers, value characters, template syntax and the
 * allow-list. `fail` turns a problem into the caller's error type.
 */
function checkAll(
  headers: Readonly<Record<string, string>>,
  allowedEnvVars: readonly string[] | undefined,
  fail: (message: string) => never,
): CheckedHeader[] {
  if (allowedEnvVars !== undefined && !Array.isArray(allowedEnvVars)) fail('allowedEnvVars must be an array of names');
  const allowed = new Set(allowedEnvVars ?? []);
  const seen = new Set<string>();
  const checked: CheckedHeader[] = [];
  for (const name of Object.keys(headers)) {
    const label = `header ${headerLabel(name)}`;
    const nameProblem = headerNameProblem(name);
    if (nameProblem) fail(`${label} ${nameProblem}`);
    const lower = name.toLowerCase();
    // Two spellings of one header would leave the receiver guessing which value counts.
    if (seen.has(lower)) fail(`${label} is set twice (header names are case-insensitive)`);
    seen.add(lower);
    const template = headers[name];
    if (typeof template !== 'string') fail(`${label} must be a string template`);
    const valueProblem = headerValueProblem(template);
    if (valueProblem) fail(`${label}: its template ${valueProblem}`);
    const parts = parseTemplate(template);
    if (typeof parts === 'string') fail(`${label}: its template ${parts}`);
    for (const part of parts) {
      if ('variable' in part && !allowed.has(part.variable)) {
        fail(`${label} uses variable ${part.variable}, which is not listed in allowedEnvVars`);
      }
    }
    checked.push({ name, parts, constant: parts.every((part) => 'literal' in part) ? template : undefined });
  }
  return checked;
}

/**
 * Config-time check (called by the webhook schema): everything that can be known without the environment.
 * Throws `HookConfigurationError` naming `where`, the header and the variable.
 */
export function checkHeaderTemplates(
  headers: Readonly<Record<string, string>> | undefined,
  allowedEnvVars: readonly string[] | undefined,
  where: string,
): void {
  if (headers === undefined) return;
  checkAll(headers, allowedEnvVars, (message) => {
    throw new HookConfigurationError(`${where}: webhook.headers: ${message}`);
  });
}

/** How many distinct header configurations keep their checked form. */
const MAX_CHECKED = 512;

/**
 * The send-time checks by content: names, templates and allow-list. They need no environment, so they run
 * once per distinct configuration instead of at every send (they were most of a control's header cost).
 * Keyed by content, not by object, because the queue's delivery worker gets a fresh copy of the same
 * headers with every job; an object changed in place simply has another key. Bounded, first in first out.
 * One per sender (`OutgoingHeaders`), not module state.
 */
export class CheckedTemplates {
  private readonly checked = new Map<string, readonly CheckedHeader[]>();

  of(headers: Readonly<Record<string, string>>, allowedEnvVars: readonly string[] | undefined, fail: (message: string) => never): readonly CheckedHeader[] {
    const key = contentKey(headers, allowedEnvVars);
    const known = key === undefined ? undefined : this.checked.get(key);
    if (known) return known;
    const checked = checkAll(headers, allowedEnvVars, fail);
    if (key !== undefined) {
      if (this.checked.size >= MAX_CHECKED) this.checked.delete(this.checked.keys().next().value!);
      this.checked.set(key, checked);
    }
    return checked;
  }
}

/**
 * Every name, template and allowed variable, each length-prefixed so no two configurations share a key
 * whatever characters they hold; `undefined` for input that is not plain strings (checked every time).
 */
function contentKey(headers: Readonly<Record<string, string>>, allowedEnvVars: readonly string[] | undefined): string | undefined {
  let key = '';
  for (const name of Object.keys(headers)) {
    const template: unknown = headers[name];
    if (typeof template !== 'string') return undefined;
    key += `${name.length}:${name}${template.length}:${template}`;
  }
  if (allowedEnvVars === undefined) return `${key}|`;
  if (!Array.isArray(allowedEnvVars)) return undefined;
  key += '[';
  for (const name of allowedEnvVars) {
    if (typeof name !== 'string') return undefined;
    key += `${name.length}:${name}`;
  }
  return key;
}

/**
 * Send-time expansion: reads `env` on every call, so a rotated secret is used by the next send. Any
 * problem is a `configuration` error raised before anything is sent.
 *
 * An empty variable counts as unset: `Bearer ` with no token is a misconfiguration that should fail
 * loudly, not an anonymous request.
 */
export function resolveHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  allowedEnvVars: readonly string[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
  /** The sender's remembered checks; without it every send checks the templates again. */
  checkedTemplates?: CheckedTemplates,
): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  const fail: (message: string) => never = (message) => {
    throw new WebhookError('configuration', message);
  };
  if (typeof headers !== 'object') fail('webhook headers must be an object');
  // Names passed `headerNameProblem`, which refuses `__proto__`: assigning them defines own properties
  // only, so no header name can reach an object's prototype.
  const resolved: Record<string, string> = {};
  const checked = checkedTemplates ? checkedTemplates.of(headers, allowedEnvVars, fail) : checkAll(headers, allowedEnvVars, fail);
  for (const { name, parts, constant } of checked) {
    if (constant !== undefined) {
      resolved[name] = constant;
      continue;
    }
    let value = '';
    for (const part of parts) {
      if ('literal' in part) {
        value += part.literal;
        continue;
      }
      // One read (each `process.env` access is a native call); only a string is a variable's value, so
      // an inherited name (`constructor`, `__proto__`) counts as unset.
      const variable: unknown = env[part.variable];
      if (typeof variable !== 'string' || variable === '') fail(`header ${headerLabel(name)} uses variable ${part.variable}, which is not set`);
      value += variable;
    }
    // Expansion is one pass: a `${` left now came from a variable's value and is never expanded again.
    if (value.includes('${')) fail(`header ${headerLabel(name)} still contains \${${expanded(parts)}`);
    const valueProblem = headerValueProblem(value);
    if (valueProblem) fail(`header ${headerLabel(name)} ${valueProblem}${expanded(parts)}`);
    resolved[name] = value;
  }
  return resolved;
}

/** ` after expanding A, B` for an error message (names only), or nothing for a template without variables. */
function expanded(parts: readonly TemplatePart[]): string {
  const used = [...new Set(parts.flatMap((part) => ('variable' in part ? [part.variable] : [])))];
  return used.length > 0 ? ` after expanding ${used.join(', ')}` : '';
}
