/** Everything an observable emits, and whether (and how) it ended; `stop()` unsubscribes. */
import type { Observable } from 'rxjs';

export function record<T>(source: Observable<T>) {
  const items: T[] = [];
  const state: { completed: boolean; error?: unknown } = { completed: false };
  const subscription = source.subscribe({ next: (item) => items.push(item), error: (error: unknown) => (state.error = error), complete: () => (state.completed = true) });
  return { items, state, stop: () => subscription.unsubscribe() };
}
