/**
 * Bearer API keys mapped to owner ids (DESIGN §7, S2): `AGENT_HOOKS_API_KEYS="key:owner,…"` and/or a keys
 * file named by `AGENT_HOOKS_API_KEYS_FILE` (one `key:owner` per line; blank lines and `#` comments
 * skipped). A key is split from its owner at the first `:`. Only SHA-256 digests of the keys are kept, and
 * a presented key is compared with every digest in constant time, so neither the match nor its position
 * shows in the timing. Keys are never logged, and no error message quotes one.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hasControlCharacter } from '../../common/control-characters.js';
import { ServerConfigurationError } from './server-configuration-error.js';

export const API_KEYS_ENV = 'AGENT_HOOKS_API_KEYS';
export const API_KEYS_FILE_ENV = 'AGENT_HOOKS_API_KEYS_FILE';

/** Owner ids are stored in 255-character columns. */
const OWNER_MAX = 255;

interface KeyEntry {
  readonly digest: Buffer;
  readonly owner: string;
}

const digestOf = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/** `key:owner` → the pair, or why not (without quoting the entry: it holds a key). */
function parseEntry(entry: string): { key: string; owner: string } | string {
  const at = entry.indexOf(':');
  if (at < 0) return 'expected key:owner';
  const key = entry.slice(0, at).trim();
  const owner = entry.slice(at + 1).trim();
  if (key === '') return 'the key is empty';
  if (owner === '') return 'the owner id is empty';
  if (owner.length > OWNER_MAX) return `the owner id is longer than ${OWNER_MAX} characters`;
  if (hasControlCharacter(owner)) return 'the owner id contains control characters';
  return { key, owner };
}

export class ApiKeyRing {
  private constructor(private readonly entries: readonly KeyEntry[]) {}

  /** No keys: auth is off (the server then binds to loopback only). */
  static readonly none = new ApiKeyRing([]);

  /** Reads `AGENT_HOOKS_API_KEYS` and the file named by `AGENT_HOOKS_API_KEYS_FILE`; throws `ServerConfigurationError`. */
  static fromEnvironment(env: NodeJS.ProcessEnv = process.env): ApiKeyRing {
    const sources: { where: string; entry: string }[] = [];
    (env[API_KEYS_ENV] ?? '').split(',').forEach((entry, index) => {
      if (entry.trim() !== '') sources.push({ where: `${API_KEYS_ENV} entry ${index + 1}`, entry });
    });
    const file = env[API_KEYS_FILE_ENV];
    if (file !== undefined && file !== '') {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
        // The variable, not its value (G7): the path is the operator's, and so is the error.
        throw new ServerConfigurationError(`${API_KEYS_FILE_ENV}: cannot read the file it names (${code})`);
      }
      text.split(/\r?\n/).forEach((line, index) => {
        const entry = line.trim();
        if (entry !== '' && !entry.startsWith('#')) sources.push({ where: `${API_KEYS_FILE_ENV} line ${index + 1}`, entry });
      });
    }
    return ApiKeyRing.of(sources);
  }

  /** From `{ where, entry: 'key:owner' }` items; `where` names the item in errors. */
  static of(sources: readonly { where: string; entry: string }[]): ApiKeyRing {
    const byDigest = new Map<string, KeyEntry>();
    for (const { where, entry } of sources) {
      const parsed = parseEntry(entry);
      if (typeof parsed === 'string') throw new ServerConfigurationError(`${where}: ${parsed}`);
      const digest = digestOf(parsed.key);
      const existing = byDigest.get(digest.toString('hex'));
      if (existing && existing.owner !== parsed.owner) throw new ServerConfigurationError(`${where}: this key is already given to another owner`);
      byDigest.set(digest.toString('hex'), { digest, owner: parsed.owner });
    }
    return new ApiKeyRing([...byDigest.values()]);
  }

  get enabled(): boolean {
    return this.entries.length > 0;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The owner of `key`, or undefined. Every entry is compared (no early exit), each in constant time. */
  ownerOf(key: string): string | undefined {
    const presented = digestOf(key);
    let owner: string | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(presented, entry.digest)) owner = entry.owner;
    }
    return owner;
  }
}
