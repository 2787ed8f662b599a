/**
 * `agentctl validate` (DESIGN §9, SPEC E4, E5): loads agents.yaml (schema, references, secret scan), resolves
 * every hook entry — importing and instantiating each plugin and checking each method exists — and never
 * calls a hook. Prints `ok` (exit 0, stdout) or every problem found, one per line as `file:line key: message`
 * (exit 2, stderr). The stages run independently where they can (a schema error does not hide a missing plugin
 * method or a secret), and messages never quote a value from either file (config-error.ts). A `tools:` entry
 * that selects none of the server's built-in tools, declared client tools or MCP servers is a problem (G7);
 * an unset model variable is a warning on stderr that leaves the exit code alone.
 */
import { AgentsConfigError, formatIssue, type ConfigIssue } from '../config/config-error.js';
import { parseAgentsConfig } from '../config/agents-config.loader.js';
import { loadConfigHooks } from '../config/config-hooks.loader.js';
import { findDefaultPluginsFile } from '../config/plugins-manifest.js';
import { readRawConfig } from '../config/raw-config-source.js';
import { scanForSecrets } from '../config/secret-scanner.js';
import { formatWarning, modelVariableWarnings } from '../config/model-variable-warnings.js';
import { knownToolsOf, toolEntryIssues } from '../config/tool-entry-selection.js';
import { declaredToolNames } from '../runtime/tools/declared-tool-names.js';
import { ClockTools } from '../server/clock.tools.js';
import type { AgentsConfig } from '../config/agents-config.js';

export interface ValidateOptions {
  config: string;
  plugins?: string;
}

export async function validateCommand(options: ValidateOptions, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const { problems, warnings } = await collectProblems(options);
  err.write(warnings.map((warning) => `${formatWarning(warning)}\n`).join(''));
  if (problems.length === 0) {
    out.write('ok\n');
    return 0;
  }
  err.write(problems.map((issue) => `${formatIssue(issue)}\n`).join(''));
  return 2;
}

/** The tools `agentctl serve`, `worker` and `run` register: what a config's `tools:` entries may select locally. */
const SERVER_TOOLS = [ClockTools];

/** Every problem of the config and its plugins, de-duplicated, by file then line; and the warnings. */
export async function collectProblems(options: ValidateOptions): Promise<{ problems: ConfigIssue[]; warnings: ConfigIssue[] }> {
  const issues: ConfigIssue[] = [];
  const raw = await configIssues(() => readRawConfig(options.config), issues);
  if (!raw) return { problems: issues, warnings: [] }; // unreadable or not YAML: nothing else can be checked

  const config: AgentsConfig | undefined = await configIssues(async () => parseAgentsConfig(raw.text, options.config), issues);
  if (config) issues.push(...toolEntryIssues(config, knownToolsOf(config, declaredToolNames(SERVER_TOOLS))));
  // The loader scans for secrets only once the schema passes; scan anyway so every problem is listed.
  issues.push(...scanForSecrets(raw.source));
  // An explicit --plugins file is always checked; the default one whenever it exists.
  const pluginsFile = options.plugins ?? findDefaultPluginsFile(options.config);
  await configIssues(() => loadConfigHooks(raw.hooksConfig, pluginsFile === undefined ? {} : { pluginsFile }), issues);
  const problems = unique(issues).sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0));
  return { problems, warnings: config ? modelVariableWarnings(config) : [] };
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
