/**
 * The conversation as published: user, assistant and tool messages. A tool message shows the call it
 * answers (folded: its arguments are shown where the API gave them — pending work carries them), and a
 * hook's verdict (`error`, `state.hookVerdict`) is marked in words, not by colour alone. `writing` is the
 * answer a model is writing (SPEC K5), shown last until its message is published.
 */
import { memo } from 'preact/compat';
import type { MessageView } from '../api/types.js';

export const Conversation = memo(function Conversation({ messages, argsByCall, writing }: { messages: readonly MessageView[]; argsByCall: ReadonlyMap<string, Record<string, unknown>>; writing?: string | undefined }) {
  if (messages.length === 0 && !writing) return <p class="empty">No message has been published yet.</p>;
  return (
    <ol class="conversation">
      {messages.map((message) => (
        <MessageItem key={message.id} message={message} args={message.toolCallId ? argsByCall.get(message.toolCallId) : undefined} />
      ))}
      {writing ? (
        <li class="message role-assistant writing" data-role="writing" aria-live="polite" aria-busy="true">
          <div class="message-head">
            <span class="role">assistant</span>
            <span class="badge">writing…</span>
          </div>
          <pre class="content">{writing}</pre>
        </li>
      ) : null}
    </ol>
  );
});

function MessageItem({ message, args }: { message: MessageView; args: Record<string, unknown> | undefined }) {
  const verdict = message.state?.hookVerdict;
  const flagged = message.error !== undefined || verdict !== undefined;
  const verdictText = verdict
    ? `${verdict.outcome === 'denied' ? 'Denied' : 'Control error'} by a hook at ${verdict.phase}`
    : message.error === 'hook_denied'
      ? 'Denied by a hook'
      : message.error === 'hook_control_error'
        ? 'A hook control failed'
        : undefined;
  return (
    <li class={`message role-${message.role}${flagged ? ' flagged' : ''}`} data-role={message.role}>
      <div class="message-head">
        <span class="role">{message.role}</span>
        {message.role === 'tool' ? (
          <span class="tool-name">
            {message.identifier}/{message.apiName}
          </span>
        ) : null}
        {verdictText ? (
          <span class="badge tone-denied verdict" data-verdict={verdict?.outcome ?? message.error}>
            <span aria-hidden="true">⊘</span> {verdictText}
          </span>
        ) : null}
      </div>
      {message.role === 'tool' ? (
        <details class="tool-call">
          <summary>
            Tool call {message.identifier}/{message.apiName} <code>{message.toolCallId}</code>
          </summary>
          {args ? <pre>{JSON.stringify(args, null, 2)}</pre> : <p class="muted">The API publishes a call's arguments only while it is pending.</p>}
        </details>
      ) : null}
      {message.content !== '' ? (
        <pre class="content">{message.content}</pre>
      ) : message.role === 'assistant' ? (
        <p class="muted">(asked for tools)</p>
      ) : (
        <p class="muted">(empty)</p>
      )}
      {verdict?.reason && verdict.reason !== message.content ? <p class="verdict-reason">Reason: {verdict.reason}</p> : null}
    </li>
  );
}
