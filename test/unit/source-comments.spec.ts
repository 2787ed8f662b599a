/**
 * Comments in `src/` state the invariant and cite the rule id (`G3`, `DESIGN §5`), not the history that led
 * to them: an issue number tells a reader nothing the code does not already say, and goes stale.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `issue 14`, `Issue #7`, `issue14`: a reference to an issue by number. */
const ISSUE_NUMBER = /issue ?#?\d{1,3}\b/gi;

/** Every issue-number reference in `texts` (file → content), one `file:line: match` each. */
export function issueReferences(texts: ReadonlyMap<string, string>): string[] {
  const hits: string[] = [];
  for (const [file, text] of texts) {
    text.split('\n').forEach((line, index) => {
      for (const [match] of line.matchAll(ISSUE_NUMBER)) hits.push(`${file}:${index + 1}: ${match}`);
    });
  }
  return hits;
}

function sourceFiles(): Map<string, string> {
  const dir = join(ROOT, 'src');
  const files = readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  return new Map(files.map((file) => [relative(ROOT, file), readFileSync(file, 'utf8')]));
}

describe('source comments', () => {
  it('comments in src/ state invariants, not history: no issue numbers', () => {
    const texts = sourceFiles();
    expect(texts.size).toBeGreaterThan(50);
    expect(issueReferences(texts)).toEqual([]);
  });

  it('the scan finds issue numbers in every spelling it forbids, and nothing else', () => {
    const texts = new Map([
      ['src/a.ts', '// committed (issue 14); fine\n/** (Issue #7 item 2) and issue3 */'],
      ['src/b.ts', '// no issue here; issues 1000 and tissue 1234 are not references'],
    ]);
    expect(issueReferences(texts)).toEqual(['src/a.ts:1: issue 14', 'src/a.ts:2: Issue #7', 'src/a.ts:2: issue3']);
  });
});
