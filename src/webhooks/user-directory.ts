/**
 * The host app's user directory (B3): how the payload builder turns a `userId` into `userEmail`. Optional:
 * without one, selected emails are simply omitted.
 */
export interface UserDirectory {
  /**
   * The user's email, or `undefined` when the user has none. May throw; a failure omits the field.
   * Look-ups are shared between concurrent builds, so the builder passes no per-build signal: one waiter
   * giving up must not cancel another waiter's look-up (B4). Time limits belong to the directory itself.
   */
  findEmail(userId: string, options?: { signal?: AbortSignal }): Promise<string | undefined>;
}

/** Nest injection token for a `UserDirectory` provider. */
export const USER_DIRECTORY = Symbol('nest-agent-hooks:UserDirectory');
