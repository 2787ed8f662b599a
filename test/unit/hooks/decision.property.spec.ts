import fc from 'fast-check';
import { readDecision } from '../../../src/hooks/decision.js';

const isAllowBody = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, 'decision') && (value as { decision: unknown }).decision === 'allow';

describe('W11–W13 decision reading (property)', () => {
  it.each(['beforeToolCall', 'afterToolCall'] as const)('never throws and never yields allow for a body that is not an allow (%s)', (point) => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), fc.record({ decision: fc.anything(), reason: fc.anything() }, { requiredKeys: [] })), (value) => {
        const reading = readDecision(value, point);
        if (reading.kind === 'allow') expect(isAllowBody(value)).toBe(true);
        if (reading.kind === 'deny') expect(typeof reading.reason === 'string' && reading.reason.length > 0).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it('W11: a body parsed from any JSON text is an allow only when its top-level decision is "allow"', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const value: unknown = JSON.parse(text);
        expect(readDecision(value, 'beforeToolCall').kind === 'allow').toBe(isAllowBody(value));
      }),
      { numRuns: 5_000 },
    );
  });
});
