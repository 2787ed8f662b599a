// G6: what refusing an oversized matcher costs, next to what compiling it would have cost.
//   node scripts/build-if-needed.mjs && node bench/pattern-limits.bench.mjs
// Prints, per pattern, the estimate's time and the re2js compile time (and heap growth) it avoids, and last
// `RESULT pattern-limits estimate-us=<x> compile-ms=<y>` for the worst pattern.
import { RE2JS } from 're2js';
import { estimateProgramSize } from '../dist/hooks/pattern-size.js';
import { patternLimitProblem } from '../dist/hooks/pattern-budget.js';

const PATTERNS = {
  // The probe: 8,400 bytes of `a{1000}` (now also refused by the 1,024-character limit).
  'a{1000} x1200 (8,400 chars)': 'a{1000}'.repeat(1200),
  'a{1000} x146 (1,022 chars)': 'a{1000}'.repeat(146),
  'a{1000} x4 (within budget)': 'a{1000}'.repeat(4),
  '100-tool alternation': Array.from({ length: 100 }, (_, i) => `tool${i}/x`).join('|'),
};

const time = (fn, rounds) => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn();
  return Number(process.hrtime.bigint() - start) / rounds / 1e3;
};

let worst = { estimateUs: 0, compileMs: 0 };
for (const [name, pattern] of Object.entries(PATTERNS)) {
  const estimateUs = time(() => estimateProgramSize(pattern.slice(0, 1024)), 200);
  const refused = 'problem' in patternLimitProblem(pattern);
  const heap = process.memoryUsage().heapUsed;
  const compileMs = time(() => RE2JS.compile(pattern), 1) / 1e3;
  const heapMb = (process.memoryUsage().heapUsed - heap) / 1e6;
  console.log(`${name}: estimate ${estimateUs.toFixed(1)} µs, refused=${refused}; re2js compile ${compileMs.toFixed(1)} ms, +${heapMb.toFixed(0)} MB heap`);
  if (compileMs > worst.compileMs) worst = { estimateUs, compileMs };
}
console.log(`RESULT pattern-limits estimate-us=${worst.estimateUs.toFixed(1)} compile-ms=${worst.compileMs.toFixed(0)}`);
