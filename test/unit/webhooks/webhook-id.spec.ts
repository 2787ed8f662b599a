/**
 * At-least-once delivery (issue 8): a notification re-sent for the same logical event carries the same
 * `webhook-id`, so receivers de-duplicate; different events, hooks or calls never share one.
 */
import { describe, expect, it } from '@jest/globals';
import { webhookIdFor } from '../../../src/webhooks/webhook-id.js';

const event = { id: 'e1', operationId: 'op-1', stepIndex: 2, toolCallId: 'call_1' };

describe('webhookIdFor', () => {
  it('issue 8: the same hook and logical event give the same id, whatever the event id of the attempt', () => {
    expect(webhookIdFor('audit', 'afterToolCall', event)).toBe(webhookIdFor('audit', 'afterToolCall', { ...event, id: 'e2', timestamp: 'later' }));
    expect(webhookIdFor('audit', 'afterToolCall', event)).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
  });

  it('issue 8: another hook, point, operation, step, call or decision gives another id', () => {
    const ids = new Set([
      webhookIdFor('audit', 'afterToolCall', event),
      webhookIdFor('other', 'afterToolCall', event),
      webhookIdFor('audit', 'beforeToolCall', event),
      webhookIdFor('audit', 'afterToolCall', { ...event, operationId: 'op-2' }),
      webhookIdFor('audit', 'afterToolCall', { ...event, stepIndex: 3 }),
      webhookIdFor('audit', 'afterToolCall', { ...event, toolCallId: 'call_2' }),
      webhookIdFor('audit', 'afterHumanIntervention', { ...event, action: 'approve' }),
      webhookIdFor('audit', 'afterHumanIntervention', { ...event, action: 'rejectAndContinue' }),
    ]);
    expect(ids.size).toBe(8);
  });

  it('events outside an operation get a fresh id each time', () => {
    expect(webhookIdFor('audit', 'afterStep', {})).not.toBe(webhookIdFor('audit', 'afterStep', {}));
  });
});
