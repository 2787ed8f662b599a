/**
 * The API key, asked once per browser session (DESIGN §7): kept in sessionStorage, so it is gone when the
 * tab closes and never written to disk by the page.
 */
const KEY = 'nest-agent-hooks.console.api-key';

export function storedApiKey(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined; // storage disabled: the key is asked again on every load
  }
}

export function storeApiKey(key: string | undefined): void {
  try {
    if (key === undefined) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, key);
  } catch {
    // storage disabled: nothing to keep
  }
}
