/**
 * `agentctl validate` (DESIGN §9, issue 6): loads agents.yaml (schema, references, secret scan), resolves
 * every hook entry — importing and instantiating each plugin and checking each method exists — and never
 * calls a hook. Prints `ok` (exit 0, stdout) or every problem found, one per line as `file:line key: message`
 * (exit 2, stderr). The stages run independently where they can (a schema error does not hide a missing plugin
 * method or a secret), and messages never quote a value from either file (config-error.ts).
 */
import { AgentsConfigError, formatIssue, type ConfigIssue } from '../config/config-error.js';
import { parseAgentsConfig } from '../config/agents-config.loader.js';
import { loadConfigHooks } from '../config/config-hooks.loader.js';
import { findDefaultPluginsFile } from '../config/plugins-manifest.js';
import { readRawConfig } from '../config/raw-config-source.js';
import { scanForSecrets } from '../config/secret-scanner.js';

export interface ValidateOptions {
  config: string;
  plugins?: string;
}

export async function validateCommand(options: ValidateOptions, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const problems = await collectProblems(options);
  if (problems.length === 0) {
    out.write('ok\n');
    return 0;
  }
  err.write(problems.map((issue) => `${formatIssue(issue)}\n`).join(''));
  return 2;
}

/** Every problem of the config and its plugins, de-duplicated, by file then line. */
export async function collectProblems(options: ValidateOptions): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const raw = await configIssues(() => readRawConfig(options.config), issues);
  if (!raw) return issues; // unreadable or not YAML: nothing else can be checked

  await configIssues(async () => parseAgentsConfig(raw.text, options.config), issues);
  // The loader scans for secrets only once the schema passes; scan anyway so every problem is listed.
  issues.push(...scanForSecrets(raw.source));
  // An explicit --plugins file is always checked; the default one whenever it exists.
  const pluginsFile = options.plugins ?? findDefaultPluginsFile(options.config);
  await configIssues(() => loadConfigHooks(raw.hooksConfig, pluginsFile === undefined ? {} : { pluginsFile }), issues);
  return unique(issues).sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0));
}

/** Runs one stage; its `AgentsConfigError` issues are collected, anything else is a bug and propagates. */
async function configIssues<T>(stage: () => Promise<T>, issues: ConfigIssue[]): Promise<T | undefined> {
  try {
    return await stage();
  } catch (error) {
    if (!(error instanceof AgentsConfigError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

function unique(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = formatIssue(issue);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
