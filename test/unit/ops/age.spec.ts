/** Ages on the command line (`agentctl purge --older-than 30d`, `serve --purge-every 1h`). */
import { AgeFormatError, parseAge } from '../../../src/common/age.js';

describe('parseAge', () => {
  it.each([
    ['90s', 90_000],
    ['90m', 90 * 60_000],
    ['12h', 12 * 3_600_000],
    ['30d', 30 * 86_400_000],
    ['2w', 14 * 86_400_000],
    [' 7d ', 7 * 86_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseAge(text)).toBe(ms);
  });

  it.each(['', '30', 'd', '0d', '-1d', '1.5h', '30 d', '30D', '30days', '1y', 'abc', '99999999999d'])('rejects %j naming the accepted form', (text) => {
    expect(() => parseAge(text)).toThrow(AgeFormatError);
    expect(() => parseAge(text)).toThrow(/positive whole number and a unit s, m, h, d or w|longer than 100 years/);
  });

  it('rejects ages over 100 years', () => {
    expect(() => parseAge('40000d')).toThrow('longer than 100 years');
  });

  it('carries the usage code (agentctl exits 2)', () => {
    expect(() => parseAge('x')).toThrow(expect.objectContaining({ code: 'usage' }));
  });
});
