/**
 * Writes plugins.toml for `agentctl generate` (SPEC E5, DESIGN §8) by editing its TEXT, not by
 * re-serializing parsed data: smol-toml drops comments, and the file is meant to be edited by hand. New
 * entries are appended, sorted, after the last key of the `[hooks.plugins]` table (the table is appended
 * when missing); `force` rewrites the lines of existing ids in place. Everything else — comments, other
 * tables, the order of existing lines, the line endings — is left as it was. The caller re-parses the
 * result: a layout this text edit cannot handle (e.g. an inline `hooks = { plugins = … }`) fails there.
 */
import { defaultPluginReference } from './plugin-default-reference.js';

export interface ManifestMerge {
  readonly text: string;
  /** Ids that got a new entry, sorted. */
  readonly added: readonly string[];
  /** Ids whose existing entry `force` rewrote, sorted. */
  readonly replaced: readonly string[];
}

const HEADER = /^\s*\[\s*hooks\s*\.\s*plugins\s*\]\s*(#.*)?$/;
const ANY_HEADER = /^\s*\[/;
const KEY_LINE = /^\s*[A-Za-z0-9_"'-][^=]*=/;

const NEW_FILE_PREAMBLE = [
  '# Plugin id → "module/path:ClassName" (DESIGN §8). Module paths are relative to the folder that holds plugins/.',
  '# Created by `agentctl generate`; it keeps hand edits when it adds entries for new plugin ids.',
];

export function entryLine(id: string): string {
  // Plugin ids are bare-key safe (letters, digits, `_`, `-`) and so is the generated reference.
  return `${id} = "${defaultPluginReference(id)}"`;
}

/** A new plugins.toml holding an entry for each id. */
export function newPluginsManifest(ids: readonly string[]): ManifestMerge {
  const sorted = sortedUnique(ids);
  const text = [...NEW_FILE_PREAMBLE, '[hooks.plugins]', ...sorted.map(entryLine)].join('\n') + '\n';
  return { text, added: sorted, replaced: [] };
}

/**
 * Merges entries for `ids` into an existing file whose declared ids are `declared`. Without changes the
 * text is returned as it was, byte for byte.
 */
export function mergePluginsManifest(text: string, declared: ReadonlySet<string>, ids: readonly string[], force: boolean): ManifestMerge {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  const wanted = sortedUnique(ids);
  const added = wanted.filter((id) => !declared.has(id));
  const replaced = force ? wanted.filter((id) => declared.has(id)) : [];
  if (added.length === 0 && replaced.length === 0) return { text, added, replaced };

  let header = lines.findIndex((line) => HEADER.test(line));
  for (const id of replaced) {
    const at = header === -1 ? -1 : keyLineIndex(lines, header, id);
    if (at === -1) throw new ManifestLayoutError(`the entry of plugin "${id}" is not a plain line of the [hooks.plugins] table; edit it by hand`);
    const comment = trailingComment(lines[at]!);
    lines[at] = entryLine(id) + comment;
  }
  if (added.length > 0) {
    if (header === -1) {
      // Drop trailing empty lines, then one blank line before the new table.
      while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
      if (lines.length > 0) lines.push('');
      lines.push('[hooks.plugins]');
      header = lines.length - 1;
      lines.push(...added.map(entryLine), '');
    } else {
      const end = sectionEnd(lines, header);
      let insertAt = header + 1;
      for (let i = header + 1; i < end; i++) if (KEY_LINE.test(lines[i]!)) insertAt = i + 1;
      lines.splice(insertAt, 0, ...added.map(entryLine));
    }
  }
  let merged = lines.join(eol);
  if (!merged.endsWith(eol)) merged += eol;
  return { text: merged, added, replaced };
}

export class ManifestLayoutError extends Error {
  override readonly name = 'ManifestLayoutError';
}

function sortedUnique(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort();
}

function sectionEnd(lines: readonly string[], header: number): number {
  for (let i = header + 1; i < lines.length; i++) if (ANY_HEADER.test(lines[i]!)) return i;
  return lines.length;
}

/** The line of `id = …` inside the table (bare or quoted key), or -1. */
function keyLineIndex(lines: readonly string[], header: number, id: string): number {
  const end = sectionEnd(lines, header);
  const key = new RegExp(`^\\s*(?:${id}|"${id}"|'${id}')\\s*=`);
  for (let i = header + 1; i < end; i++) if (key.test(lines[i]!)) return i;
  return -1;
}

/** A `# …` comment after a simple `key = "value"` line, kept when the value is rewritten. */
function trailingComment(line: string): string {
  const match = /^[^#"']*=\s*(?:"(?:[^"\\]|\\.)*"|'[^']*')(\s*#.*)$/.exec(line);
  return match?.[1] ?? '';
}
