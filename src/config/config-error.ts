/**
 * A config file is invalid. Each issue names the file, the line and the key path, and never a value from
 * the file: a misplaced API key must not end up in a terminal, a log or a CI report.
 */
export type KeyPath = readonly (string | number)[];

export interface ConfigIssue {
  readonly file: string;
  /** 1-based; absent only when the file could not be read at all. */
  readonly line?: number;
  /** `agents.assistant.tools[1]`; empty for file-level problems (unreadable, YAML syntax). */
  readonly path: string;
  readonly message: string;
}

export class AgentsConfigError extends Error {
  override readonly name = 'AgentsConfigError';
  readonly code = 'configuration';

  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
  }
}

/** `config/agents.yaml:12 agents.assistant.model: unknown model "gpt"`. */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}`;
  return issue.path === '' ? `${where}: ${issue.message}` : `${where} ${issue.path}: ${issue.message}`;
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
