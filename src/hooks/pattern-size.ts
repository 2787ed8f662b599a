/**
 * An estimate of the program re2js would compile a pattern to, computed from the pattern text alone so a
 * huge program is refused before it is built (re2js expands `x{n,m}` into m copies of `x`; twelve hundred
 * `a{1000}` take seconds and hundreds of MB to compile). Follows the size rules of re2js's own parser
 * (`Parser.calcSize`), and errs on the high side where its syntax is ambiguous. Iterative: a pattern of
 * nested groups never recurses here.
 */

/** One open group: `done` holds the finished alternatives (with their `|`), `concat` the current one. */
interface Frame {
  done: number;
  concat: number;
  /** Size of the last atom of `concat`, which a following repetition operator applies to. */
  last: number;
  /** Instructions the group itself adds when it closes (a capture's two). */
  overhead: number;
}

const newFrame = (overhead: number): Frame => ({ done: 0, concat: 0, last: 0, overhead });

const addAtom = (frame: Frame, size: number): void => {
  frame.concat += size;
  frame.last = size;
};

/** Replaces the last atom by its repetition. */
const repeatLast = (frame: Frame, size: (atom: number) => number): void => {
  const repeated = size(Math.max(1, frame.last));
  frame.concat += repeated - frame.last;
  frame.last = repeated;
};

const closeFrame = (frame: Frame): number => frame.done + frame.concat + frame.overhead;

/** `{n}`, `{n,}`, `{n,m}` at `at`, as re2js reads them; anything else there is a literal `{`. */
function parseRepeat(pattern: string, at: number): { min: number; max: number; end: number } | undefined {
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at, at + 24));
  if (!match) return undefined;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : match[3] === '' ? -1 : Number(match[3]);
  return { min, max, end: at + match[0].length };
}

/** End (exclusive) of a `[...]` class starting at `at`, mirroring re2js's `parseClass`. */
function classEnd(pattern: string, at: number): number {
  let i = at + 1;
  if (pattern[i] === '^') i++;
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    const named = /^\[:\^?[A-Za-z]+:\]/.exec(pattern.slice(i, i + 16));
    if (named) i += named[0].length;
    else if (pattern[i] === '\\') i = escapeEnd(pattern, i);
    else i++;
  }
  return i + 1;
}

/** End (exclusive) of the escape starting at `at` (`\x{…}`, `\p{…}`, `\pL`, `\d`, …). */
function escapeEnd(pattern: string, at: number): number {
  const next = pattern[at + 1];
  if ((next === 'x' || next === 'p' || next === 'P') && pattern[at + 2] === '{') {
    const close = pattern.indexOf('}', at + 3);
    return close === -1 ? pattern.length : close + 1;
  }
  if (next === 'p' || next === 'P' || next === 'x') return Math.min(pattern.length, at + (next === 'x' ? 4 : 3));
  return Math.min(pattern.length, at + 2);
}

/** After `(` at `at`: where the group's body starts, and whether it is a flags-only `(?i)` (no group). */
function groupStart(pattern: string, at: number): { body: number; flagsOnly: boolean } {
  if (pattern[at + 1] !== '?') return { body: at + 1, flagsOnly: false };
  const head = /^\(\?(?:P?<[A-Za-z0-9_]+>|<=|<!|=|!|[A-Za-z-]*:|([A-Za-z-]*)\))/.exec(pattern.slice(at, at + 80));
  if (!head) return { body: at + 1, flagsOnly: false };
  return { body: at + head[0].length, flagsOnly: head[1] !== undefined };
}

/** Estimated instruction count of the compiled pattern; `Infinity` past any sensible size. */
export function estimateProgramSize(pattern: string): number {
  const stack: Frame[] = [newFrame(0)];
  let i = 0;
  while (i < pattern.length) {
    const frame = stack[stack.length - 1]!;
    const char = pattern[i]!;
    if (char === '\\' && pattern[i + 1] === 'Q') {
      // `\Q…\E`: every character a literal.
      const end = pattern.indexOf('\\E', i + 2);
      const stop = end === -1 ? pattern.length : end;
      for (let k = i + 2; k < stop; k++) addAtom(frame, 1);
      i = end === -1 ? pattern.length : end + 2;
    } else if (char === '\\') {
      addAtom(frame, 1);
      i = escapeEnd(pattern, i);
    } else if (char === '[') {
      addAtom(frame, 1);
      i = classEnd(pattern, i);
    } else if (char === '(') {
      const { body, flagsOnly } = groupStart(pattern, i);
      if (!flagsOnly) stack.push(newFrame(2));
      i = body;
    } else if (char === ')' && stack.length > 1) {
      stack.pop();
      addAtom(stack[stack.length - 1]!, closeFrame(frame));
      i++;
    } else if (char === '|') {
      frame.done += frame.concat + 1;
      frame.concat = 0;
      frame.last = 0;
      i++;
    } else if (char === '*' || char === '+' || char === '?') {
      repeatLast(frame, (atom) => atom + 2);
      // A lazy `*?`: the `?` is part of the operator.
      i += pattern[i + 1] === '?' ? 2 : 1;
    } else if (char === '{' && parseRepeat(pattern, i)) {
      const { min, max, end } = parseRepeat(pattern, i)!;
      repeatLast(frame, (atom) => (max === -1 ? 1 + Math.max(min, 1) * atom : Math.max(max, 1) * atom + Math.max(0, max - min)));
      i = end + (pattern[end] === '?' ? 1 : 0);
    } else {
      addAtom(frame, 1);
      i++;
    }
  }
  // Unclosed groups (a syntax error re2js reports) still count.
  while (stack.length > 1) {
    const frame = stack.pop()!;
    addAtom(stack[stack.length - 1]!, closeFrame(frame));
  }
  // A match program has a few fixed instructions (fail, the unanchored prefix, match).
  return closeFrame(stack[0]!) + 4;
}
