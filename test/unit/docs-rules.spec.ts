/**
 * The rule ids that code and tests cite (`SPEC G2`, `(W12)`, `K3: …` in a test name, `DESIGN §4`) are only
 * useful when a reader can look them up: each must have an anchor in `docs/` — `docs/rules.md` for the SPEC
 * rules (`<a id="g2">`), `docs/architecture.md` for the DESIGN sections (`<a id="design-4">`).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A SPEC rule id: a family letter and a number from 1, standing alone. Not preceded by a letter, digit,
 * `_`, `%` (percent-encoding: `%E2`), `\` (escapes), `#` (colours), `-`, `.`, `+` or `=` (base64), nor
 * followed by a letter, digit, `_` or a decimal part — so hex, base64, `v0.3` and `sha256` do not count.
 */
const RULE_ID = /(?<![A-Za-z0-9_%\\#.+=-])([AWLPVTMBDESGOKFX][1-9][0-9]?)(?![A-Za-z0-9_]|\.[0-9])/g;
/** Tokens of the rule-id shape that are not rule ids, with why. */
const NOT_RULES: ReadonlyMap<string, string> = new Map([
  ['V8', 'the JavaScript engine'],
  ...['P50', 'P90', 'P95', 'P99'].map((p): [string, string] => [p, 'a latency percentile']),
]);
/** How many numbered rules each SPEC family has (v0.3): every one gets a paragraph, cited or not. */
const SPEC_FAMILIES: Readonly<Record<string, number>> = { A: 4, W: 14, L: 5, P: 6, V: 1, T: 5, M: 2, B: 4, D: 3, E: 9, S: 4, G: 9, O: 5, K: 6, F: 6 };
/** A DESIGN section: `§4`, also the second of `DESIGN §3, §8`; not an RFC's `§10.2.3`. */
const DESIGN_SECTION = /(?<!RFC [0-9]{3,5} )§ ?([0-9]{1,2})(?![0-9.])/g;

export interface Citation {
  /** `G2`, or `§4` for a DESIGN section. */
  readonly id: string;
  /** The first file (relative to the repository) that cites it. */
  readonly file: string;
}

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Every rule id and DESIGN section cited in `texts` (file → content), each with the first file citing it. */
export function citationsIn(texts: ReadonlyMap<string, string>): Citation[] {
  const found = new Map<string, string>();
  for (const [file, text] of texts) {
    for (const [, id] of text.matchAll(RULE_ID)) if (!NOT_RULES.has(id!) && !found.has(id!)) found.set(id!, file);
    for (const [, section] of text.matchAll(DESIGN_SECTION)) if (!found.has(`§${section}`)) found.set(`§${section}`, file);
  }
  return [...found].map(([id, file]) => ({ id, file }));
}

/** The anchors of markdown `texts`: explicit `id="…"` ones, and headings' leading ids (`### G2 · …`, `## §4 …`). */
export function anchorsIn(texts: Iterable<string>): Set<string> {
  const anchors = new Set<string>();
  for (const text of texts) {
    for (const [, id] of text.matchAll(/\bid="([^"]+)"/g)) anchors.add(id!.toLowerCase());
    for (const [, id] of text.matchAll(/^#{1,6} +([A-Z][0-9]{1,2}|§ ?[0-9]{1,2})\b/gm)) anchors.add(anchorOf(id!.replace(' ', '')));
  }
  return anchors;
}

/** The anchor a citation resolves to: `g2` for G2, `design-4` for §4. */
export function anchorOf(id: string): string {
  return id.startsWith('§') ? `design-${id.slice(1)}` : id.toLowerCase();
}

/** Citations without an anchor, one line each: the id and a file citing it. */
export function unresolved(citations: readonly Citation[], anchors: ReadonlySet<string>): string[] {
  return citations.filter(({ id }) => !anchors.has(anchorOf(id))).map(({ id, file }) => `${id} (cited in ${file})`).sort();
}

function read(files: readonly string[]): Map<string, string> {
  return new Map(files.map((file) => [relative(ROOT, file), readFileSync(file, 'utf8')]));
}

describe('docs: the rules in the repository', () => {
  const docs = read(filesUnder(join(ROOT, 'docs'), '.md'));

  it('every rule id cited in src/ and test/ resolves to a paragraph in docs/', () => {
    const code = read([...filesUnder(join(ROOT, 'src'), '.ts'), ...filesUnder(join(ROOT, 'test'), '.ts')]);
    const citations = citationsIn(code);
    // The scan finds what the code cites (a broken regex would find nothing and pass).
    expect(citations.map(({ id }) => id)).toEqual(expect.arrayContaining(['A1', 'W12', 'G2', 'O3', '§3', '§7']));
    expect(unresolved(citations, anchorsIn(docs.values()))).toEqual([]);
  });

  it('docs/rules.md has a paragraph for every SPEC rule, cited or not (K, F and G9 of v0.3 included)', () => {
    const anchors = anchorsIn([docs.get('docs/rules.md') ?? '']);
    const rules = Object.entries(SPEC_FAMILIES).flatMap(([family, count]) => Array.from({ length: count }, (_, i) => `${family}${i + 1}`));
    expect(rules.filter((rule) => !anchors.has(anchorOf(rule)))).toEqual([]);
  });

  it('the check fails for a cited id whose paragraph is missing, and ignores look-alikes', () => {
    const family = 'G';
    const rule = `${family}2`;
    const code = new Map([
      ['src/a.ts', `// SPEC ${rule}: recovery (DESIGN §4, §8)`],
      ['test/b.spec.ts', `it('${family}3: …'); const hex = '%${'E'}2%80'; const sum = 'sha256'; // RFC 9110 §10.2.3, V8's parser, v0.3, P99`],
    ]);
    const citations = citationsIn(code);
    expect(citations.map(({ id }) => id).sort()).toEqual(['G2', 'G3', '§4', '§8']);
    const anchors = anchorsIn([`<a id="g2"></a>\n### G2 · …`, `## §4 Modes`, `<a id="design-8"></a>`]);
    expect(unresolved(citations, anchors)).toEqual(['G3 (cited in test/b.spec.ts)']);
  });

  it('links between the docs pages point at anchors that exist', () => {
    const anchors = new Map([...docs].map(([file, text]) => [file.replace(/^docs\//, ''), anchorsIn([text])]));
    const broken: string[] = [];
    for (const [file, text] of docs) {
      for (const [, page, anchor] of text.matchAll(/\]\(([a-z-]+\.md)?#([a-z0-9-]+)\)/g)) {
        const target = page ?? file.replace(/^docs\//, '');
        const headings = [...(docs.get(`docs/${target}`) ?? '').matchAll(/^#{1,6} +(.+)$/gm)].map(([, h]) => slug(h!));
        if (!anchors.get(target)?.has(anchor!) && !headings.includes(anchor!)) broken.push(`${file}: ${page ?? ''}#${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}
