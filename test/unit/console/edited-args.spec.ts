/**
 * SPEC F6 in the console: the approval form's arguments are editable JSON. Unchanged (whatever the key
 * order or spacing) the approval carries no `args`; changed, they are sent for the server's schema check;
 * text that is not a JSON object is refused in the page before anything is sent.
 */
import { approvalBody, argsText } from '../../../console/src/operation/edited-args.js';
import { statusSign } from '../../../console/src/outcomes.js';

describe('F6: the console approval form with editable arguments', () => {
  const original = { amount: 90, note: 'model' };

  it('unchanged arguments approve without args; key order and spacing are not edits', () => {
    expect(approvalBody(argsText(original), original)).toEqual({ body: { action: 'approve' } });
    expect(approvalBody('{"note":"model",  "amount": 90}', original)).toEqual({ body: { action: 'approve' } });
  });

  it('edited arguments are sent as args', () => {
    expect(approvalBody('{ "amount": 20 }', original)).toEqual({ body: { action: 'approve', args: { amount: 20 } } });
  });

  it('text that is not a JSON object is a problem shown in the page, nothing sent', () => {
    expect(approvalBody('{ amount: 20 }', original)).toEqual({ problem: 'The arguments are not valid JSON.' });
    expect(approvalBody('[1]', original)).toEqual({ problem: 'The arguments must be a JSON object.' });
    expect(approvalBody('null', original)).toEqual({ problem: 'The arguments must be a JSON object.' });
  });
});

describe('F4: the console names the budget reasons', () => {
  it('token_limit and tool_limit are shown as completed with a warning', () => {
    expect(statusSign('completed', 'tool_limit')).toEqual({ label: 'completed · tool limit', symbol: '⚠', tone: 'error' });
    expect(statusSign('completed', 'token_limit')).toMatchObject({ label: 'completed · token limit' });
  });
});
