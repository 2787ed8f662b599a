/**
 * The operation's pending work (`pendingTools`): an approval gets Approve (with its arguments editable as
 * JSON, SPEC F6), Reject and Reject and continue (with a reason); a deferred call gets a form for its
 * result. What happens next arrives over the event stream; a refused action (409: decided elsewhere
 * meanwhile; 400: the tool's schema refused edited arguments, naming the path) is said in words.
 */
import { useState } from 'preact/hooks';
import { ApiCallError, postJson, UnauthorizedError } from '../api/api-client.js';
import type { PendingTool } from '../api/types.js';
import { approvalBody, argsText } from './edited-args.js';

export function PendingWork({ operationId, pending }: { operationId: string; pending: readonly PendingTool[] }) {
  if (pending.length === 0) return <p class="empty">Nothing is waiting.</p>;
  return (
    <ul class="pending-list">
      {pending.map((tool) => (
        <li key={tool.toolCallId} class="pending-item" data-kind={tool.kind}>
          <h4>
            <span class={`badge tone-waiting`}>
              <span aria-hidden="true">‖</span> {tool.kind === 'approval' ? 'needs approval' : 'waiting for a result'}
            </span>{' '}
            {tool.identifier}/{tool.apiName} <code>{tool.toolCallId}</code>
          </h4>
          <details open={Object.keys(tool.args).length > 0}>
            <summary>Arguments</summary>
            <pre>{JSON.stringify(tool.args, null, 2)}</pre>
          </details>
          {tool.kind === 'approval' ? <ApprovalActions operationId={operationId} tool={tool} /> : <DeferredResultForm operationId={operationId} tool={tool} />}
        </li>
      ))}
    </ul>
  );
}

function describe(error: unknown): string {
  if (error instanceof UnauthorizedError) return 'The API key was refused.';
  if (error instanceof ApiCallError) return error.status === 409 ? `Not done: ${error.message} (it was settled meanwhile).` : `Refused (${error.status} ${error.code}): ${error.message}`;
  return 'The server could not be reached.';
}

function useAction(): { busy: boolean; message: string | undefined; run: (action: () => Promise<unknown>, done: string) => void } {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string>();
  const run = (action: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setMessage(undefined);
    action().then(
      () => setMessage(done),
      (error: unknown) => setMessage(describe(error)),
    ).finally(() => setBusy(false));
  };
  return { busy, message, run };
}

function ApprovalActions({ operationId, tool }: { operationId: string; tool: PendingTool }) {
  const [reason, setReason] = useState('');
  const [args, setArgs] = useState(() => argsText(tool.args));
  const [argsProblem, setArgsProblem] = useState<string>();
  const { busy, message, run } = useAction();
  const path = `v1/operations/${encodeURIComponent(operationId)}/interventions/${encodeURIComponent(tool.toolCallId)}`;
  const decide = (action: 'approve' | 'reject' | 'rejectAndContinue') => {
    if (action !== 'approve') return run(() => postJson(path, reason.trim() !== '' ? { action, reason: reason.trim() } : { action }), `Sent: ${action}.`);
    const approval = approvalBody(args, tool.args);
    setArgsProblem('problem' in approval ? approval.problem : undefined);
    if ('body' in approval) run(() => postJson(path, approval.body), approval.body.args ? 'Sent: approve with edited arguments.' : 'Sent: approve.');
  };
  const reasonId = `reason-${tool.toolCallId}`;
  const argsId = `args-${tool.toolCallId}`;
  return (
    <form class="actions" aria-label={`Decision on ${tool.identifier}/${tool.apiName}`} onSubmit={(event) => event.preventDefault()}>
      <div class="field">
        <label for={argsId}>Arguments to approve with (JSON; edit them to run the call with yours)</label>
        <textarea id={argsId} rows={4} value={args} spellcheck={false} onInput={(event) => setArgs(event.currentTarget.value)} disabled={busy} aria-invalid={argsProblem !== undefined} />
        {argsProblem ? <p class="field-problem" role="alert">{argsProblem}</p> : null}
      </div>
      <div class="field">
        <label for={reasonId}>Reason (for a rejection; the model sees it with Reject and continue)</label>
        <input id={reasonId} type="text" value={reason} onInput={(event) => setReason(event.currentTarget.value)} disabled={busy} />
      </div>
      <div class="buttons">
        <button type="button" class="primary" disabled={busy} onClick={() => decide('approve')}>
          Approve
        </button>
        <button type="button" disabled={busy} onClick={() => decide('reject')}>
          Reject
        </button>
        <button type="button" disabled={busy} onClick={() => decide('rejectAndContinue')}>
          Reject and continue
        </button>
      </div>
      <p class="action-message" role="status" aria-live="polite">
        {message ?? ''}
      </p>
    </form>
  );
}

function DeferredResultForm({ operationId, tool }: { operationId: string; tool: PendingTool }) {
  const [content, setContent] = useState('');
  const [success, setSuccess] = useState(true);
  const { busy, message, run } = useAction();
  const path = `v1/operations/${encodeURIComponent(operationId)}/tool-results/${encodeURIComponent(tool.toolCallId)}`;
  const contentId = `result-${tool.toolCallId}`;
  const successId = `success-${tool.toolCallId}`;
  return (
    <form
      class="actions"
      aria-label={`Result of ${tool.identifier}/${tool.apiName}`}
      onSubmit={(event) => {
        event.preventDefault();
        run(() => postJson(path, { content, success }), 'Result sent.');
      }}
    >
      <div class="field">
        <label for={contentId}>Result content</label>
        <textarea id={contentId} rows={3} value={content} onInput={(event) => setContent(event.currentTarget.value)} disabled={busy} required />
      </div>
      <div class="field inline">
        <input id={successId} type="checkbox" checked={success} onChange={(event) => setSuccess(event.currentTarget.checked)} disabled={busy} />
        <label for={successId}>The call succeeded</label>
      </div>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          Send result
        </button>
      </div>
      <p class="action-message" role="status" aria-live="polite">
        {message ?? ''}
      </p>
    </form>
  );
}
