/**
 * Ages and intervals on the command line: a positive whole number and a unit — `90s`, `90m`, `12h`,
 * `30d`, `2w` (`agentctl purge --older-than 30d`, `serve --purge-every 1h`).
 */
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

const AGE = /^(\d{1,9})([smhdw])$/;

/** The largest age accepted: about 100 years (a cutoff before that is a typo, not a policy). */
const MAX_AGE_MS = 100 * 365 * UNIT_MS.d;

export class AgeFormatError extends Error {
  override readonly name = 'AgeFormatError';
  readonly code = 'usage';
}

/** Milliseconds, or `AgeFormatError` naming the accepted form (the input is echoed: it is never a secret). */
export function parseAge(text: string): number {
  const match = AGE.exec(text.trim());
  const amount = match ? Number(match[1]) : NaN;
  if (!match || amount <= 0) {
    throw new AgeFormatError(`"${text}" is not an age: use a positive whole number and a unit s, m, h, d or w (e.g. 90m, 12h, 30d)`);
  }
  const ms = amount * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms > MAX_AGE_MS) throw new AgeFormatError(`"${text}" is longer than 100 years`);
  return ms;
}
