/**
 * The secret scanner of DESIGN §8 (SPEC E4, S2), run over agents.yaml and plugins.toml. Secrets live in
 * environment variables; a config file may only name them. A value is rejected when:
 * - it sits under a key that suggests a secret (token, secret, password, api key, private key, credential,
 *   also as a word of a camelCase / snake_case / kebab-case name), unless the key names an environment
 *   variable (`…Env`, `allowedEnvVars`) and the value is a variable name; or
 * - whatever its key, it looks like secret material: an `sk-…` key, a `Bearer …` credential, a PEM block.
 * Issues name file, line and key path and say which rule matched, never the value. A key that itself looks
 * like secret material is reported with that key masked in the path.
 */
import { formatKeyPath, type ConfigIssue, type KeyPath } from './config-error.js';

/** Where a scanned document came from: names the file and finds the line of a key path. */
export interface ScannedSource {
  readonly file: string;
  readonly data: unknown;
  lineOf(path: KeyPath): number;
}

const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A word that is, or ends with, a secret noun: `token`, `accessToken` → `access`+`token`, `authtoken`. */
const SECRET_WORD = /(token|secret|password|credential|apikey|privatekey)s?$/;
const TOKEN_WORD = /tokens?$/;
/** Two-word secret names: `api key`, `private key` (`apiKey`, `API_KEY`, `private-key`). */
const SECRET_PAIRS: readonly (readonly [string, RegExp])[] = [
  ['api', /^keys?$/],
  ['private', /^keys?$/],
];

/** `sk-…` API keys (OpenAI, Anthropic, …): the prefix, then a long run of key characters. */
const SK_KEY = /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}/;
/** PEM armour of any kind (private keys, certificates): the block is secret material as a whole. */
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]*-----/;
/**
 * `Bearer <credential>` (RFC 6750 token68), not a `${VAR}` / `$VAR` template. Prose ("a bearer token") is
 * not a credential: the word after `Bearer` must hold a digit, or be the whole rest of the value.
 */
const BEARER = /(?<![A-Za-z0-9])bearer\s+(?![$])([A-Za-z0-9\-._~+/]{8,}=*)(?=$|[\s"',;)])/gi;
const BEARER_ONLY = /^\s*bearer\s+(?![$])[A-Za-z0-9\-._~+/]{8,}=*\s*$/i;

export type SecretMaterialKind = 'an sk- API key' | 'a bearer credential' | 'a PEM block';

/** The words of a key: `OPENAI_API_KEY` → openai, api, key; `clientSecretEnv` → client, secret, env. */
export function keyWords(key: string): string[] {
  return (key.match(/[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+/g) ?? []).map((word) => word.toLowerCase());
}

/** Which secret nouns a key names, as words (`token`, `password`, `api key`…); empty when none. */
function secretNouns(words: readonly string[]): string[] {
  const nouns: string[] = [];
  words.forEach((word, index) => {
    if (SECRET_WORD.test(word)) nouns.push(word);
    const next = words[index + 1];
    if (next !== undefined && SECRET_PAIRS.some(([first, second]) => word === first && second.test(next))) nouns.push(`${word} ${next}`);
  });
  return nouns;
}

export function keySuggestsSecret(key: string): boolean {
  return secretNouns(keyWords(key)).length > 0;
}

/** `apiKeyEnv`, `API_KEY_ENV`, `tokenEnvVar`, `allowedEnvVars`: the value names an environment variable. */
export function keyNamesEnvironmentVariable(key: string): boolean {
  const words = keyWords(key);
  const last = words.at(-1);
  if (last === 'env') return true;
  return words.at(-2) === 'env' && (last === 'var' || last === 'vars');
}

/** What kind of secret material a text holds, if any. */
export function secretMaterialIn(text: string): SecretMaterialKind | undefined {
  if (SK_KEY.test(text)) return 'an sk- API key';
  if (PEM_BLOCK.test(text)) return 'a PEM block';
  if (BEARER_ONLY.test(text)) return 'a bearer credential';
  for (const match of text.matchAll(BEARER)) if (/\d/.test(match[1]!)) return 'a bearer credential';
  return undefined;
}

/**
 * Why the value at `key` is a literal secret, or `undefined`. Only text and numbers can hold one. A number
 * under a key whose only secret noun is "token" is an LLM token count or price (`maxTokens`,
 * `costPerTokenUsd`), not a credential.
 */
export function literalSecretProblem(key: string | undefined, value: unknown): string | undefined {
  if (typeof value === 'string') {
    const material = secretMaterialIn(value);
    if (material !== undefined) return `literal secret: the value looks like ${material}`;
  }
  if (key === undefined) return undefined;
  const isText = typeof value === 'string' && value.trim() !== '';
  const isNumber = typeof value === 'number' || typeof value === 'bigint';
  if (!isText && !isNumber) return undefined;
  const nouns = secretNouns(keyWords(key));
  if (nouns.length === 0) return undefined;
  if (isNumber && nouns.every((noun) => TOKEN_WORD.test(noun))) return undefined;
  if (keyNamesEnvironmentVariable(key)) {
    return typeof value === 'string' && ENV_VAR_NAME.test(value)
      ? undefined
      : 'must be the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*), not a literal secret';
  }
  return 'literal secret: the key suggests a secret; keep the value in an environment variable and name the variable instead (e.g. `apiKeyEnv: OPENAI_API_KEY`)';
}

/** Every literal secret in `source.data`, in document order; list items are judged by their list's key. */
export function scanForSecrets(source: ScannedSource): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const report = (path: KeyPath, message: string, masked: KeyPath = path): void => {
    issues.push({ file: source.file, line: source.lineOf(path), path: formatKeyPath(masked), message });
  };
  const walk = (value: unknown, path: KeyPath, masked: KeyPath, key: string | undefined): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...path, index], [...masked, index], key));
      return;
    }
    if (isMapping(value)) {
      for (const [childKey, child] of Object.entries(value)) {
        const material = secretMaterialIn(childKey);
        const childMasked = [...masked, material === undefined ? childKey : '(masked key)'];
        if (material !== undefined) report([...path, childKey], `literal secret: the key looks like ${material}`, childMasked);
        walk(child, [...path, childKey], childMasked, childKey);
      }
      return;
    }
    const problem = literalSecretProblem(key, value);
    if (problem !== undefined) report(path, problem, masked);
  };
  walk(source.data, [], [], undefined);
  return issues;
}

/** Plain mappings: YAML maps and TOML tables (null-prototype objects), not dates or other class instances. */
function isMapping(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
}
