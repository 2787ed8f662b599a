/**
 * Shared, bounded email look-ups (B4): at most `maxUsers` entries for `ttlMs`, the oldest evicted first.
 * Pending, missing and failed look-ups are cached too, so a burst of builds for one user, or a directory
 * that keeps failing, costs one call per TTL. Nothing is persisted.
 */
import type { UserDirectory } from './user-directory.js';

export const DEFAULT_MAX_USERS = 1000;
export const DEFAULT_TTL_MS = 5 * 60 * 1000;

/** What a waiter gets when its own signal fired first. */
export const CANCELLED: unique symbol = Symbol('cancelled');
export type EmailLookup = string | undefined | typeof CANCELLED;

export interface UserEmailCacheOptions {
  readonly maxUsers?: number;
  readonly ttlMs?: number;
  /** Milliseconds clock; injectable for tests. */
  readonly now?: () => number;
}

interface Entry {
  /** Never rejects: a failure settles as `undefined` (the field is omitted, B3). */
  readonly email: Promise<string | undefined>;
  readonly expiresAt: number;
}

function usableEmail(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined;
}

/** Resolves with `promise`, or with `CANCELLED` as soon as `signal` fires; never touches `promise` itself. */
function waitFor(promise: Promise<string | undefined>, signal: AbortSignal | undefined): Promise<EmailLookup> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(CANCELLED);
  return new Promise<EmailLookup>((resolve) => {
    const onAbort = (): void => resolve(CANCELLED);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((email) => {
      signal.removeEventListener('abort', onAbort);
      resolve(email);
    });
  });
}

export class UserEmailCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxUsers: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly directory: UserDirectory,
    options: UserEmailCacheOptions = {},
  ) {
    this.maxUsers = options.maxUsers ?? DEFAULT_MAX_USERS;
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    if (!Number.isInteger(this.maxUsers) || this.maxUsers < 1) throw new RangeError('maxUsers must be a positive integer');
    if (!Number.isFinite(this.ttlMs) || this.ttlMs < 0) throw new RangeError('ttlMs must be a non-negative number');
    this.now = options.now ?? Date.now;
  }

  /** How many users are cached (for tests and leak checks). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The user's email, `undefined` when missing or failed, or `CANCELLED` when `signal` fired first. The
   * shared look-up goes on for the other waiters and the cache.
   */
  emailFor(userId: string, signal?: AbortSignal): Promise<EmailLookup> {
    if (signal?.aborted) return Promise.resolve(CANCELLED);
    return waitFor(this.entry(userId).email, signal);
  }

  private entry(userId: string): Entry {
    const now = this.now();
    const cached = this.entries.get(userId);
    if (cached && cached.expiresAt > now) return cached;
    // Deleting first re-inserts a refreshed user at the young end of the eviction order.
    if (cached) this.entries.delete(userId);
    while (this.entries.size >= this.maxUsers) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    const entry: Entry = { email: this.lookUp(userId), expiresAt: now + this.ttlMs };
    this.entries.set(userId, entry);
    return entry;
  }

  private lookUp(userId: string): Promise<string | undefined> {
    try {
      return Promise.resolve(this.directory.findEmail(userId)).then(usableEmail, () => undefined);
    } catch {
      return Promise.resolve(undefined); // a directory that throws synchronously fails like one that rejects
    }
  }
}
