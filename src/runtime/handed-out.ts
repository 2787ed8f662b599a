/**
 * A promise the runtime hands to a caller who may never await it (an operation's `done`, `result()`):
 * marking it handled keeps its rejection at shutdown from becoming an unhandled one, which under Node's
 * default would end the host process in the middle of a graceful close. Whoever awaits it still sees
 * the rejection: the no-op handler is attached to the same promise, not to a copy that is handed out.
 */
export function handedOut<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
