/**
 * Parses a YAML config keeping its syntax tree, so every later error can point at a line: `lineOf(path)`
 * walks the tree to the deepest node the path reaches and answers the line of that key (or list item).
 * Syntax errors are described from their code (`yaml-error-text.ts`): yaml's messages may quote the file.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { AgentsConfigError, type ConfigIssue, type KeyPath } from './config-error.js';
import { yamlErrorText } from './yaml-error-text.js';

export interface YamlSource {
  readonly file: string;
  /** The document as plain JavaScript data (`null` for an empty file). */
  readonly data: unknown;
  /** The line of the key (or item) at `path`, or of its deepest ancestor present in the file. */
  lineOf(path: KeyPath): number;
}

export function parseYamlSource(text: string, file: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const lineAt = (offset: number): number => lineCounter.linePos(offset).line;
  if (doc.errors.length > 0) {
    throw new AgentsConfigError(
      doc.errors.map((error): ConfigIssue => ({ file, line: lineAt(error.pos[0]), path: '', message: yamlErrorText(error.code) })),
    );
  }
  let data: unknown;
  try {
    // yaml bounds alias expansion (maxAliasCount), so a "billion laughs" file fails here instead of hanging.
    data = doc.toJS({ maxAliasCount: 100 });
  } catch {
    // An unresolved alias or an excessive expansion; yaml's message would quote the alias name.
    throw new AgentsConfigError([{ file, line: 1, path: '', message: 'YAML error: aliases cannot be expanded (an unknown anchor, or too many aliases)' }]);
  }
  return { file, data, lineOf: (path) => lineAt(offsetOf(doc, path)) };
}

function offsetOf(doc: Document, path: KeyPath): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (const key of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => keyText(item.key) === String(key));
      if (!pair) break;
      // The key's line, not the value's: `model:` is where a reader looks for `agents.x.model`.
      offset = rangeStart(pair.key) ?? rangeStart(pair.value) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      const item: unknown = node.items[key];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return typeof key === 'string' ? key : undefined;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return Array.isArray(range) ? range[0] : undefined;
}
