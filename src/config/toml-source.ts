/**
 * Parses a TOML config (plugins.toml) keeping enough of its layout to point at lines, like `yaml-source.ts`
 * does for YAML: smol-toml gives the data, a light scan of the text records the line of every table header
 * and `key =` line. `lineOf(path)` answers the line of the deepest recorded prefix of the path (a key inside
 * an inline table answers the line of the table's key). Syntax errors are described by fixed texts: the
 * parser's message quotes the offending source line, which may hold a secret.
 */
import { parse, TomlError } from 'smol-toml';
import { AgentsConfigError, type KeyPath } from './config-error.js';

export interface TomlSource {
  readonly file: string;
  /** The document as plain data (tables are null-prototype objects). */
  readonly data: Record<string, unknown>;
  lineOf(path: KeyPath): number;
}

/** smol-toml's own reasons are fixed texts, except one that passes another error's message on. */
const KNOWN_REASONS = new Set([
  'invalid value',
  'illegal character in numeric literal',
  'unfinished numeric value',
  'trying to redefine an already defined value',
  'trying to redefine an already defined table or value',
  'illegal underscore',
  'expected comma or end of structure',
  'unrecognised escape sequence',
  'unfinished table',
  'unfinished string',
  'unfinished array',
  'unexpected end of key',
  'invalid unicode escape',
  'invalid non-hex character in unicode escape',
  'invalid escape: only line-ending whitespace may be escaped',
  'invalid date-time: time part is malformed',
  'invalid date-time: date part is malformed',
  'invalid date',
  'integer value cannot be represented losslessly',
  'incomplete key-value: cannot find end of key',
  'illegal quoted key: multiline strings are not allowed',
  'illegal leading zero',
  'illegal empty bare key',
  'illegal character in key',
  'expected end of table array declaration',
  'each key-value declaration must be followed by an end-of-line',
  'document contains excessively nested structures. aborting.',
  'document contains an unsafe property',
  'control characters are not allowed in strings',
  'control characters are not allowed in comments',
]);

export function parseTomlSource(text: string, file: string): TomlSource {
  let data: Record<string, unknown>;
  try {
    data = parse(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = /^Invalid TOML document: ([^\n]*)/.exec(error.message)?.[1];
      const text = reason !== undefined && KNOWN_REASONS.has(reason) ? `TOML syntax error: ${reason}` : 'TOML syntax error';
      throw new AgentsConfigError([{ file, line: error.line, path: '', message: text }]);
    }
    throw new AgentsConfigError([{ file, line: 1, path: '', message: 'TOML syntax error' }]);
  }
  const lines = keyLines(text);
  return {
    file,
    data,
    lineOf: (path) => {
      for (let length = path.length; length > 0; length--) {
        const line = lines.get(JSON.stringify(path.slice(0, length).map(String)));
        if (line !== undefined) return line;
      }
      return 1;
    },
  };
}

/**
 * The line of every table header and `key =` line, by key path (JSON of the string keys). The text is
 * already known to be valid TOML, so the scan only has to skip strings, comments and multi-line values.
 */
function keyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  const arrayCounts = new Map<string, number>();
  const record = (path: string[], line: number): void => {
    const key = JSON.stringify(path);
    if (!lines.has(key)) lines.set(key, line);
  };
  let table: string[] = [];
  let depth = 0; // open `[` / `{` of values spanning lines
  let inString: '"""' | "'''" | undefined;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    let rest = raw;
    if (inString !== undefined) {
      const end = rest.indexOf(inString);
      if (end === -1) return;
      rest = rest.slice(end + 3);
      inString = undefined;
    } else if (depth === 0) {
      const header = /^\s*(\[\[?)(.*)$/.exec(rest);
      if (header) {
        const parsed = parseKey(header[2]!);
        if (parsed) {
          const isArray = header[1] === '[[';
          const base = parsed.keys;
          // `[hooks.plugins]` also defines `hooks`, implicitly, on this line.
          for (let length = 1; length < base.length; length++) record(base.slice(0, length), line);
          if (isArray) {
            const count = arrayCounts.get(JSON.stringify(base)) ?? 0;
            arrayCounts.set(JSON.stringify(base), count + 1);
            record(base, line);
            table = [...base, String(count)];
          } else {
            table = base;
          }
          record(table, line);
          return;
        }
      }
      const assignment = parseKey(rest);
      if (assignment && assignment.rest.startsWith('=')) {
        const path = [...table, ...assignment.keys];
        for (let length = table.length + 1; length <= path.length; length++) record(path.slice(0, length), line);
        rest = assignment.rest.slice(1);
      }
    }
    ({ depth, inString } = scanValue(rest, depth));
  });
  return lines;
}

/** A dotted key at the start of `text` (bare, "basic" or 'literal' parts), and what follows it. */
function parseKey(text: string): { keys: string[]; rest: string } | undefined {
  const keys: string[] = [];
  let rest = text.trimStart();
  for (;;) {
    let part: RegExpExecArray | null;
    if ((part = /^[A-Za-z0-9_-]+/.exec(rest))) keys.push(part[0]);
    else if ((part = /^"((?:[^"\\]|\\.)*)"/.exec(rest))) keys.push(unescapeBasic(part[1]!));
    else if ((part = /^'([^']*)'/.exec(rest))) keys.push(part[1]!);
    else return undefined;
    rest = rest.slice(part[0].length).trimStart();
    if (!rest.startsWith('.')) return { keys, rest };
    rest = rest.slice(1).trimStart();
  }
}

function unescapeBasic(text: string): string {
  try {
    return JSON.parse(`"${text.replace(/\\U([0-9A-Fa-f]{8})/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)).replace(/"/g, '\\"'))}"`) as string;
  } catch {
    return text;
  }
}

/** Tracks brackets and multi-line strings through a value, skipping strings and comments. */
function scanValue(text: string, depth: number): { depth: number; inString: '"""' | "'''" | undefined } {
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '#') break;
    if (text.startsWith('"""', i) || text.startsWith("'''", i)) {
      const quote = text.slice(i, i + 3) as '"""' | "'''";
      const end = text.indexOf(quote, i + 3);
      if (end === -1) return { depth, inString: quote };
      i = end + 3;
      continue;
    }
    if (char === '"' || char === "'") {
      i++;
      while (i < text.length && text[i] !== char) i += char === '"' && text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (char === '[' || char === '{') depth++;
    else if (char === ']' || char === '}') depth = Math.max(0, depth - 1);
    i++;
  }
  return { depth, inString: undefined };
}
