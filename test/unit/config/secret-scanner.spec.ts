/**
 * Issue 6 item 2, DESIGN §8, SPEC E4, S2: the secret scanner over agents.yaml and plugins.toml. A literal
 * secret fails the load naming file, line and key; the value itself never appears in any message.
 */
import { AgentsConfigError } from '../../../src/config/config-error.js';
import { parseAgentsConfig } from '../../../src/config/agents-config.loader.js';
import { parsePluginsManifest } from '../../../src/config/plugins-manifest.js';
import {
  keyNamesEnvironmentVariable,
  keySuggestsSecret,
  keyWords,
  literalSecretProblem,
  scanForSecrets,
  secretMaterialIn,
} from '../../../src/config/secret-scanner.js';

const YAML_FILE = 'config/agents.yaml';
const TOML_FILE = 'plugins/plugins.toml';
/** Distinctive values: a message that contains any part of one has echoed it. */
const SK = 'sk-proj-DISTINCTIVE0a1b2c3d4e5f6';
const OPAQUE = 'DISTINCTIVEhunter2';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.DISTINCTIVE.c2lnbmF0dXJlMTIz';
const PEM = '-----BEGIN PRIVATE KEY-----\\nMIIDISTINCTIVEBADKEY\\n-----END PRIVATE KEY-----';

function yamlRejection(text: string): AgentsConfigError {
  let caught: unknown;
  try {
    parseAgentsConfig(text, YAML_FILE);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AgentsConfigError);
  const error = caught as AgentsConfigError;
  expect(error.message).not.toContain('DISTINCTIVE');
  expect(error.message).not.toContain('hunter2');
  for (const issue of error.issues) expect(issue.file).toBe(YAML_FILE);
  return error;
}

/** The single secret issue of a YAML file: line, key path and the rule that matched. */
function yamlSecret(text: string, line: number, path: string, fragment: string): void {
  const error = yamlRejection(text);
  expect(error.issues.map(({ line: l, path: p }) => ({ line: l, path: p }))).toEqual([{ line, path }]);
  expect(error.issues[0]!.message).toContain(fragment);
  expect(error.message).toBe(`${YAML_FILE}:${line} ${path}: ${error.issues[0]!.message}`);
}

function tomlRejection(text: string): AgentsConfigError {
  let caught: unknown;
  try {
    parsePluginsManifest(text, TOML_FILE);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AgentsConfigError);
  const error = caught as AgentsConfigError;
  expect(error.message).not.toContain('DISTINCTIVE');
  expect(error.message).not.toContain('hunter2');
  for (const issue of error.issues) expect(issue.file).toBe(TOML_FILE);
  return error;
}

describe('S2 secret scanner: keys that suggest a secret', () => {
  it('splits camelCase, snake_case, kebab-case and SCREAMING_CASE keys into words', () => {
    expect(keyWords('OPENAI_API_KEY')).toEqual(['openai', 'api', 'key']);
    expect(keyWords('clientSecretEnv')).toEqual(['client', 'secret', 'env']);
    expect(keyWords('x-api-key')).toEqual(['x', 'api', 'key']);
    expect(keyWords('APIKey')).toEqual(['api', 'key']);
    expect(keyWords('costPerTokenUsd')).toEqual(['cost', 'per', 'token', 'usd']);
  });

  it.each([
    'token',
    'accessToken',
    'ACCESS_TOKEN',
    'authtoken',
    'refresh-tokens',
    'secret',
    'clientSecret',
    'client_secret',
    'password',
    'dbPassword',
    'DB_PASSWORD',
    'apiKey',
    'api_key',
    'apikey',
    'APIKEY',
    'x-api-key',
    'OPENAI_API_KEY',
    'privateKey',
    'private_key',
    'credential',
    'googleCredentials',
  ])('%s suggests a secret, case-insensitive, also as a word of a longer name', (key) => {
    expect(keySuggestsSecret(key)).toBe(true);
  });

  it.each(['model', 'instructions', 'tokenizer', 'publicKey', 'cacheKey', 'keyboard', 'monkey', 'secretary', 'apiName', 'plugin', 'passwordless'])(
    '%s does not suggest a secret',
    (key) => {
      expect(keySuggestsSecret(key)).toBe(false);
    },
  );

  it('…Env and …EnvVars keys name environment variables; others do not', () => {
    for (const key of ['apiKeyEnv', 'API_KEY_ENV', 'tokenEnv', 'allowedEnvVars', 'secretEnvVar', 'baseUrlEnv']) expect(keyNamesEnvironmentVariable(key)).toBe(true);
    for (const key of ['apiKey', 'environment', 'envelope', 'tokenEnvironment', 'envToken']) expect(keyNamesEnvironmentVariable(key)).toBe(false);
  });

  it('a text value under a secret key is a literal secret', () => {
    expect(literalSecretProblem('password', OPAQUE)).toMatch(/^literal secret: the key suggests a secret/);
    expect(literalSecretProblem('accessToken', 'abc')).toMatch(/^literal secret/);
    expect(literalSecretProblem('api_key', 'not-secret-looking')).toMatch(/^literal secret/);
  });

  it('numbers under password-like keys are secrets; under token-only keys they are LLM token counts and prices', () => {
    expect(literalSecretProblem('password', 123456)).toMatch(/^literal secret/);
    expect(literalSecretProblem('pin_secret', 4242)).toMatch(/^literal secret/);
    expect(literalSecretProblem('maxTokens', 4096)).toBeUndefined();
    expect(literalSecretProblem('costPerTokenUsd', 0.5)).toBeUndefined();
    expect(literalSecretProblem('compactAtTokens', 8000)).toBeUndefined();
    expect(literalSecretProblem('maxTokens', 'abc')).toMatch(/^literal secret/);
  });

  it('empty text, booleans and null hold no secret', () => {
    expect(literalSecretProblem('token', '')).toBeUndefined();
    expect(literalSecretProblem('token', '   ')).toBeUndefined();
    expect(literalSecretProblem('useToken', true)).toBeUndefined();
    expect(literalSecretProblem('password', null)).toBeUndefined();
  });

  it('an environment-variable key accepts a variable name only', () => {
    expect(literalSecretProblem('apiKeyEnv', 'OPENAI_API_KEY')).toBeUndefined();
    expect(literalSecretProblem('tokenEnv', '_HOOK_TOKEN2')).toBeUndefined();
    expect(literalSecretProblem('apiKeyEnv', OPAQUE + '!')).toMatch(/must be the name of an environment variable/);
    expect(literalSecretProblem('tokenEnv', '2FA_TOKEN')).toMatch(/must be the name of an environment variable/);
    expect(literalSecretProblem('secretEnv', 12345)).toMatch(/must be the name of an environment variable/);
  });
});

describe('S2 secret scanner: values that look like secret material, under any key', () => {
  it('sk- API keys, anywhere in the text', () => {
    expect(secretMaterialIn(SK)).toBe('an sk- API key');
    expect(secretMaterialIn(`use ${SK} here`)).toBe('an sk- API key');
    expect(secretMaterialIn('sk-ant-api03-abcdefghijklmnop')).toBe('an sk- API key');
    expect(literalSecretProblem('note', SK)).toBe('literal secret: the value looks like an sk- API key');
  });

  it('short sk- words and words merely containing sk- are not keys', () => {
    expect(secretMaterialIn('sk-test')).toBeUndefined();
    expect(secretMaterialIn('task-sk-abcdefghijklmnopqrstuvwxyz')).toBeUndefined();
    expect(secretMaterialIn('risk-assessment-workflow-agent')).toBeUndefined();
  });

  it('Bearer credentials, but not ${VAR} templates and not prose', () => {
    expect(secretMaterialIn(`Bearer ${JWT}`)).toBe('a bearer credential');
    expect(secretMaterialIn(`bearer ${OPAQUE}`)).toBe('a bearer credential');
    expect(secretMaterialIn(`Authorization: Bearer ${JWT}`)).toBe('a bearer credential');
    expect(secretMaterialIn('Bearer ${HOOK_TOKEN}')).toBeUndefined();
    expect(secretMaterialIn('Bearer $HOOK_TOKEN')).toBeUndefined();
    expect(secretMaterialIn('Send a bearer token for the context7 server only.')).toBeUndefined();
    expect(secretMaterialIn('Bearer authentication is used by the MCP server')).toBeUndefined();
  });

  it('PEM blocks of any kind', () => {
    expect(secretMaterialIn('-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----')).toBe('a PEM block');
    expect(secretMaterialIn('-----BEGIN OPENSSH PRIVATE KEY-----')).toBe('a PEM block');
    expect(secretMaterialIn('-----BEGIN CERTIFICATE-----')).toBe('a PEM block');
    expect(secretMaterialIn('----- not a pem -----')).toBeUndefined();
  });

  it('scans a whole document: nested maps, lists judged by their key, masked secret-looking keys', () => {
    const lines: Record<string, number> = {};
    const issues = scanForSecrets({
      file: 'x.yaml',
      data: { a: { b: [{ token: OPAQUE }], tokens: ['ok?', ''], note: SK, [SK]: 'value', fine: 'text', n: 3 } },
      lineOf: (path) => (lines[JSON.stringify(path)] = path.length),
    });
    expect(issues.map(({ path, line }) => ({ path, line }))).toEqual([
      { path: 'a.b[0].token', line: 4 },
      { path: 'a.tokens[0]', line: 3 },
      { path: 'a.note', line: 2 },
      { path: 'a["(masked key)"]', line: 2 },
    ]);
    expect(issues[3]!.message).toBe('literal secret: the key looks like an sk- API key');
    expect(JSON.stringify(issues)).not.toContain('DISTINCTIVE');
  });
});

describe('S2 secret scanner on agents.yaml: a secret anywhere fails the load', () => {
  it('a literal under a secret key in metadata, named by file, line and key, never echoed', () => {
    yamlSecret(`system: s\nmetadata:\n  team: platform\n  apiToken: ${OPAQUE}\n`, 4, 'metadata.apiToken', 'the key suggests a secret');
  });

  it('secret material under an innocent key: instructions, script contents, tool-call args', () => {
    yamlSecret(`system: s\nagents: {}\nmetadata:\n  note: "use ${SK}"\n`, 4, 'metadata.note', 'sk- API key');
    yamlSecret(
      `system: s\nmodels:\n  m:\n    provider: scripted\n    script:\n      - content: "Bearer ${JWT}"\n`,
      6,
      'models.m.script[0].content',
      'bearer credential',
    );
    yamlSecret(
      `system: s\nmodels:\n  m:\n    provider: scripted\n    script:\n      - toolCalls: [ { identifier: a, apiName: b, args: { password: "${OPAQUE}" } } ]\n`,
      6,
      'models.m.script[0].toolCalls[0].args.password',
      'the key suggests a secret',
    );
    yamlSecret(
      `system: s\nmodels: { m: { provider: scripted, script: [] } }\nagents:\n  a:\n    model: m\n    instructions: "${PEM}"\n`,
      6,
      'agents.a.instructions',
      'PEM block',
    );
  });

  it('a secret inside hooks: is caught when agents.yaml loads, before any hook validation', () => {
    yamlSecret(`system: s\nhooks:\n  on_run_end:\n    - { ref: "plugins/hooks/x:f", token: "${OPAQUE}" }\n`, 4, 'hooks.on_run_end[0].token', 'literal secret');
  });

  it('every secret of a file is reported, sorted by line', () => {
    const error = yamlRejection(`system: s\nmetadata:\n  b: "${SK}"\n  password: ${OPAQUE}\n  c: [ "Bearer ${JWT}" ]\n`);
    expect(error.issues.map((issue) => `${issue.line} ${issue.path}`)).toEqual(['3 metadata.b', '4 metadata.password', '5 metadata.c[0]']);
  });

  it('accepts environment-variable references, token counts and prices, Bearer templates', () => {
    const config = parseAgentsConfig(
      [
        'system: s',
        'metadata: { tokenEnv: HOOK_TOKEN, allowedEnvVars: [ HOOK_TOKEN, OTHER ], header: "Bearer ${HOOK_TOKEN}", secretEnvVar: MY_SECRET }',
        'models:',
        '  m: { provider: scripted, costPerTokenUsd: 0.5, script: [ { content: "Use a bearer token." } ] }',
        '  o: { provider: openai, model: gpt-4o-mini, apiKeyEnv: OPENAI_API_KEY, baseUrlEnv: OPENAI_BASE_URL }',
        'agents:',
        '  a: { model: m, limits: { compactAtTokens: 8000 } }',
        '',
      ].join('\n'),
      YAML_FILE,
    );
    expect(config.metadata).toMatchObject({ tokenEnv: 'HOOK_TOKEN', header: 'Bearer ${HOOK_TOKEN}' });
    expect(config.models.o).toMatchObject({ apiKeyEnv: 'OPENAI_API_KEY' });
  });

  it('an env-var key with a literal instead of a name is rejected, never echoed', () => {
    yamlSecret(`system: s\nmetadata:\n  tokenEnv: "${OPAQUE}!"\n`, 3, 'metadata.tokenEnv', 'must be the name of an environment variable');
  });
});

describe('S2 secret scanner on plugins.toml', () => {
  it('a secret value under a plugin id or any other key fails the load naming file, line and key', () => {
    const error = tomlRejection(`# plugins\n[hooks.plugins]\naudit = "plugins/hooks/audit:Audit"\nleak = "${SK}"\n`);
    expect(error.issues).toEqual([{ file: TOML_FILE, line: 4, path: 'hooks.plugins.leak', message: 'literal secret: the value looks like an sk- API key' }]);
  });

  it('a secret key anywhere (even an unknown table) is reported as a secret first', () => {
    const error = tomlRejection(`[hooks.plugins]\naudit = "plugins/hooks/audit:Audit"\n\n[settings]\napi_key = "${OPAQUE}"\n`);
    expect(error.issues.map((issue) => `${issue.line} ${issue.path}`)).toEqual(['5 settings.api_key']);
    expect(error.issues[0]!.message).toContain('the key suggests a secret');
  });

  it('a Bearer literal and a PEM block in TOML strings', () => {
    const error = tomlRejection(`[hooks.plugins]\na = "Bearer ${JWT}"\nb = """\n${PEM.replaceAll('\\n', '\n')}\n"""\n`);
    expect(error.issues.map((issue) => `${issue.line} ${issue.path} ${issue.message}`)).toEqual([
      '2 hooks.plugins.a literal secret: the value looks like a bearer credential',
      '3 hooks.plugins.b literal secret: the value looks like a PEM block',
    ]);
  });

  it('an ordinary plugins.toml passes the scanner', () => {
    const manifest = parsePluginsManifest('[hooks.plugins]\naudit_hooks = "plugins/hooks/audit-hooks:AuditHooksHook"\n', TOML_FILE);
    expect([...manifest.plugins.keys()]).toEqual(['audit_hooks']);
  });
});
