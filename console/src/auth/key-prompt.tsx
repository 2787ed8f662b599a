/**
 * Asks for the API key when the server wants one (a 401), once per browser session; says plainly when the
 * key given was refused, and asks again. A native modal `<dialog>` (`showModal`): the page behind it is
 * inert, so keyboard focus stays in the dialog; Escape does not close it, since nothing works without a key.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export function KeyPrompt({ refused, onKey }: { refused: boolean; onKey: (key: string) => void }) {
  const [key, setKey] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
    input.current?.focus();
  }, [refused]);
  return (
    <dialog
      ref={dialog}
      class="key-prompt"
      aria-labelledby="key-title"
      aria-describedby="key-help"
      // Neither Escape nor a click outside closes it; should the browser close it anyway (a repeated
      // Escape may not be cancellable), it is shown again: nothing works without a key.
      {...{ closedby: 'none' }}
      onCancel={(event) => event.preventDefault()}
      onClose={() => dialog.current?.isConnected && dialog.current.showModal()}
    >
      <h2 id="key-title">API key</h2>
      {refused ? (
        <p class="problem" role="alert" data-testid="key-refused">
          <span aria-hidden="true">⊘</span> Key refused: the server did not accept that API key. Enter a valid one.
        </p>
      ) : null}
      <p id="key-help">
        This server needs an API key. It is kept in this tab's session storage only, and sent as <code>Authorization: Bearer</code> with every call.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim() !== '') onKey(key.trim());
        }}
      >
        <div class="field">
          <label for="api-key">API key</label>
          <input id="api-key" ref={input} type="password" autocomplete="off" spellcheck={false} value={key} onInput={(event) => setKey(event.currentTarget.value)} required />
        </div>
        <button type="submit" class="primary">
          Use this key
        </button>
      </form>
    </dialog>
  );
}
