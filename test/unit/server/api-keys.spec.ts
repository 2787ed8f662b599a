/** Issue 7 item 2: API keys → owners; constant-time lookups over digests; errors never quote a key. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyRing } from '../../../src/server/api/api-keys.js';
import { ServerConfigurationError } from '../../../src/server/api/server-configuration-error.js';
import { assertLoopbackWithoutKeys, isLoopbackHost } from '../../../src/server/api/loopback-host.js';

describe('API keys (AGENT_HOOKS_API_KEYS, AGENT_HOOKS_API_KEYS_FILE)', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'agent-hooks-keys-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('maps each key to its owner, from the variable and the file (comments and blank lines skipped)', () => {
    const file = join(dir, 'keys');
    writeFileSync(file, '# ops team\nk-file:carol\r\n\n  k-spaced : dave  \n');
    const ring = ApiKeyRing.fromEnvironment({ AGENT_HOOKS_API_KEYS: 'k-a:alice, k-b:bob,', AGENT_HOOKS_API_KEYS_FILE: file });
    expect(ring.enabled).toBe(true);
    expect(ring.size).toBe(4);
    expect(ring.ownerOf('k-a')).toBe('alice');
    expect(ring.ownerOf('k-b')).toBe('bob');
    expect(ring.ownerOf('k-file')).toBe('carol');
    expect(ring.ownerOf('k-spaced')).toBe('dave');
    expect(ring.ownerOf('k-a ')).toBeUndefined();
    expect(ring.ownerOf('')).toBeUndefined();
    expect(ring.ownerOf('k-c')).toBeUndefined();
  });

  it('splits at the first colon: an owner id may hold colons', () => {
    expect(ApiKeyRing.fromEnvironment({ AGENT_HOOKS_API_KEYS: 'k1:team:alice' }).ownerOf('k1')).toBe('team:alice');
  });

  it('no variable and no file: auth is off', () => {
    expect(ApiKeyRing.fromEnvironment({}).enabled).toBe(false);
    expect(ApiKeyRing.fromEnvironment({ AGENT_HOOKS_API_KEYS: ' , ' }).enabled).toBe(false);
  });

  it.each([
    ['an entry without owner', { AGENT_HOOKS_API_KEYS: 'ok:alice,sekrit-value' }, 'AGENT_HOOKS_API_KEYS entry 2: expected key:owner'],
    ['an empty owner', { AGENT_HOOKS_API_KEYS: 'sekrit-value:' }, 'owner id is empty'],
    ['an empty key', { AGENT_HOOKS_API_KEYS: ':alice' }, 'key is empty'],
    ['one key for two owners', { AGENT_HOOKS_API_KEYS: 'sekrit-value:alice,sekrit-value:bob' }, 'entry 2: this key is already given to another owner'],
  ])('rejects %s, naming the entry and never the key', (_name, env, message) => {
    let error: unknown;
    try {
      ApiKeyRing.fromEnvironment(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ServerConfigurationError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toContain('sekrit-value');
  });

  it('G7: a keys file that cannot be read names the variable, not its value or content', () => {
    expect(() => ApiKeyRing.fromEnvironment({ AGENT_HOOKS_API_KEYS_FILE: join(dir, 'missing') })).toThrow('AGENT_HOOKS_API_KEYS_FILE: cannot read the file it names (ENOENT)');
    const file = join(dir, 'bad');
    writeFileSync(file, 'sekrit-value\n');
    expect(() => ApiKeyRing.fromEnvironment({ AGENT_HOOKS_API_KEYS_FILE: file })).toThrow('AGENT_HOOKS_API_KEYS_FILE line 1: expected key:owner');
  });
});

describe('without keys the server is loopback-only', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])('%s is loopback', (host) => expect(isLoopbackHost(host)).toBe(true));
  it.each(['0.0.0.0', '::', '10.0.0.5', '192.168.1.1', 'example.com', ''])('%s is not', (host) => expect(isLoopbackHost(host)).toBe(false));

  it('refuses a public address without keys, allows it with keys', () => {
    expect(() => assertLoopbackWithoutKeys('0.0.0.0', ApiKeyRing.none)).toThrow(/refusing to listen on 0\.0\.0\.0 without API keys/);
    expect(() => assertLoopbackWithoutKeys('0.0.0.0', ApiKeyRing.of([{ where: 'test', entry: 'k:alice' }]))).not.toThrow();
    expect(() => assertLoopbackWithoutKeys('127.0.0.1', ApiKeyRing.none)).not.toThrow();
  });
});
