/**
 * A config file is invalid. Each issue names the file, the line and the key path, and never a secret from
 * the file: a misplaced API key must not end up in a terminal, a log or a CI report. A value is shown only
 * where it is a name the reader must see to find the mistake (`entry`: a `tools:` entry such as
 * "clock/nwo"), and only when it cannot be key material.
 */
export type KeyPath = readonly (string | number)[];

export interface ConfigIssue {
  readonly file: string;
  /** 1-based; absent only when the file could not be read at all. */
  readonly line?: number;
  /** `agents.assistant.tools[1]`; empty for file-level problems (unreadable, YAML syntax). */
  readonly path: string;
  /** The entry at `path` itself, when it is a name safe to show (see `shownEntry`). */
  readonly entry?: string;
  readonly message: string;
}

/** Long enough for any tool name a person types, short enough that no pasted blob fits. */
const SHOWN_ENTRY_MAX = 80;

/**
 * `value` when it may be shown beside its key path: one line of printable ASCII without quotes or
 * backslashes, at most SHOWN_ENTRY_MAX characters, and not shaped like an API key; otherwise undefined.
 */
export function shownEntry(value: string): string | undefined {
  if (value.length > SHOWN_ENTRY_MAX || !/^[\x21-\x7e]+$/.test(value) || /["\\]/.test(value)) return undefined;
  return /^(sk|pk|rk)[-_]/i.test(value) ? undefined : value;
}

export class AgentsConfigError extends Error {
  override readonly name = 'AgentsConfigError';
  readonly code = 'configuration';

  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
  }
}

/** `config/agents.yaml:12 agents.assistant.model: unknown model "gpt"`, `…:13 agents.assistant.tools[0] "clock/nwo": selects no tool…`. */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}`;
  if (issue.path === '') return `${where}: ${issue.message}`;
  return `${where} ${issue.path}${issue.entry !== undefined ? ` "${issue.entry}"` : ''}: ${issue.message}`;
}

/** `agents.assistant.tools[1]`; keys that are not plain names are quoted so a message stays one line. */
export function formatKeyPath(path: KeyPath): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}
