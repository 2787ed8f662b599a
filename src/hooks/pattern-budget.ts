/**
 * G6 limits on matchers and `approval` / `deferred` patterns, checked from the text before re2js compiles
 * anything: a length limit, a compiled-size budget per pattern and one per registration. Messages are fixed
 * text (the caller adds the field name); none quotes the pattern.
 */
import { MAX_PATTERN_LENGTH, MAX_PATTERN_PROGRAM_SIZE, MAX_REGISTRATION_PROGRAM_SIZE } from './input-limits.js';
import { estimateProgramSize } from './pattern-size.js';

/** Patterns that match every tool and compile to nothing. */
const matchesAll = (pattern: string): boolean => pattern === '' || pattern === '*';

/** Why one pattern is refused, or `undefined` with its estimated size. */
export function patternLimitProblem(pattern: string): { problem: string } | { size: number } {
  if (matchesAll(pattern)) return { size: 0 };
  if (pattern.length > MAX_PATTERN_LENGTH) return { problem: `must be at most ${MAX_PATTERN_LENGTH} characters` };
  const size = estimateProgramSize(pattern);
  if (size > MAX_PATTERN_PROGRAM_SIZE) {
    return { problem: `compiles to too large a program (over ${MAX_PATTERN_PROGRAM_SIZE} instructions; large repetition counts like {1000} multiply the size)` };
  }
  return { size };
}

/** The compiled-size budget of one registration (one operation's caller hooks, one agent's patterns). */
export class PatternBudget {
  private used = 0;

  /** Charges one pattern; returns why it is refused (its own limits or the registration's budget). */
  charge(pattern: string): string | undefined {
    const checked = patternLimitProblem(pattern);
    if ('problem' in checked) return checked.problem;
    this.used += checked.size;
    if (this.used > MAX_REGISTRATION_PROGRAM_SIZE) {
      return `the patterns of this registration together compile to too large a program (over ${MAX_REGISTRATION_PROGRAM_SIZE} instructions)`;
    }
    return undefined;
  }
}
