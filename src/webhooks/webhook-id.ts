/**
 * The `webhook-id` of a notification. Delivery is at least once: a step re-run after a crash, or a
 * terminal sequence a reconciler runs again, sends the same notification twice. So the id names the
 * logical event, not the attempt: the same hook, point, operation, step, tool call, attempt and decision always give
 * the same id, and a receiver de-duplicates on it (Standard Webhooks). Events outside an operation get a
 * fresh id.
 */
import { createHash, randomUUID } from 'node:crypto';

export function webhookIdFor(hookId: string, point: string, event: Readonly<Record<string, unknown>>): string {
  const operationId = event['operationId'];
  if (typeof operationId !== 'string') return `msg_${randomUUID()}`;
  const identity: unknown[] = [hookId, point, operationId, event['stepIndex'] ?? null, event['toolCallId'] ?? null, event['action'] ?? null];
  // F3: each failed attempt of a retried call is its own event; the first keeps the id it always had.
  const attempt = event['attempt'];
  if (typeof attempt === 'number' && attempt > 1) identity.push(attempt);
  return `msg_${createHash('sha256').update(JSON.stringify(identity)).digest('base64url').slice(0, 32)}`;
}
