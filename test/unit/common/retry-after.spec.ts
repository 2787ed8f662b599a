import { parseRetryAfter } from '../../../src/common/retry-after.js';

describe('Retry-After parsing (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT');

  it.each([
    ['0', 0],
    ['2', 2_000],
    [' 120 ', 120_000],
  ])('delay-seconds %j is %d ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it('an HTTP-date is the time left until then (never negative)', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:47 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:47 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:00 GMT', now)).toBe(0);
  });

  it.each([undefined, '', '-1', '1.5', '1e3', 'soon', '2024-01-01T00:00:00Z', 'Sun, 06 Nov 1994 08:49:47'])('%j is not a Retry-After', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  it('of a repeated header, the first counts', () => {
    expect(parseRetryAfter(['3', '60'], now)).toBe(3_000);
  });
});
