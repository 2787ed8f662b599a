/** The console's shell: the key form when the server asks for one, and the two pages by the address's hash. */
import { useEffect, useState } from 'preact/hooks';
import { onUnauthorized } from './api/api-client.js';
import { storeApiKey, storedApiKey } from './api/api-key-store.js';
import { KeyPrompt } from './auth/key-prompt.js';
import { OperationsPage, type ListFilters } from './list/operations-page.js';
import { OperationPage } from './operation/operation-page.js';

type Route = { page: 'list'; filters: ListFilters } | { page: 'operation'; operationId: string };

function routeOf(hash: string): Route {
  const match = /^#\/operations\/([^/?]+)/.exec(hash);
  if (match) return { page: 'operation', operationId: decodeURIComponent(match[1]!) };
  const params = new URLSearchParams(hash.split('?')[1] ?? '');
  return { page: 'list', filters: { status: params.get('status') ?? '', agentId: params.get('agent') ?? '' } };
}

function hashOf(filters: ListFilters): string {
  const params = new URLSearchParams();
  if (filters.status) params.set('status', filters.status);
  if (filters.agentId) params.set('agent', filters.agentId);
  const query = params.toString();
  return query ? `#/?${query}` : '#/';
}

type Auth = 'ok' | 'needed' | 'refused';

export function App() {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  const [auth, setAuth] = useState<Auth>('ok');
  // Bumped when a key is entered: the pages read again with it.
  const [authEpoch, setAuthEpoch] = useState(0);
  const [hasKey, setHasKey] = useState(() => storedApiKey() !== undefined);

  useEffect(() => {
    const onHash = () => setRoute(routeOf(location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(
    () =>
      onUnauthorized((error) => {
        if (error.withKey) {
          // A refusal of a key that was replaced meanwhile (an answer still in flight) says nothing of the new one.
          if (error.key !== storedApiKey()) return;
          storeApiKey(undefined);
          setHasKey(false);
          setAuth('refused');
        } else {
          setAuth((current) => (current === 'refused' ? current : 'needed'));
        }
      }),
    [],
  );

  const useKey = (key: string) => {
    storeApiKey(key);
    setHasKey(true);
    setAuth('ok');
    setAuthEpoch((epoch) => epoch + 1);
  };

  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          // The hash is the page's route: move the focus instead of following the link.
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <h1>
          <a href="#/">Operations console</a>
        </h1>
        <span class="muted">nest-agent-hooks</span>
        {hasKey ? (
          <button
            type="button"
            class="link"
            onClick={() => {
              storeApiKey(undefined);
              setHasKey(false);
              setAuthEpoch((epoch) => epoch + 1);
            }}
          >
            Forget the API key
          </button>
        ) : null}
      </header>
      {route.page === 'operation' ? (
        <OperationPage key={route.operationId} operationId={route.operationId} authEpoch={authEpoch} />
      ) : (
        <OperationsPage filters={route.filters} onFilters={(filters) => (location.hash = hashOf(filters))} authEpoch={authEpoch} />
      )}
      {auth !== 'ok' ? <KeyPrompt refused={auth === 'refused'} onKey={useKey} /> : null}
    </>
  );
}
