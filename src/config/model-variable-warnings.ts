/**
 * SPEC G7: a model's `apiKeyEnv` or `baseUrlEnv` that names an unset variable is a warning, not an
 * error — the variables are read at call time (S2), so they may be set later, and a local
 * OpenAI-compatible server may need no key. Warnings name the variable, never a value.
 */
import { formatKeyPath, type ConfigIssue } from './config-error.js';
import type { AgentsConfig } from './agents-config.js';

const VARIABLE_KEYS = ['apiKeyEnv', 'baseUrlEnv'] as const;

export function modelVariableWarnings(config: Pick<AgentsConfig, 'models' | 'source'>, env: NodeJS.ProcessEnv = process.env): ConfigIssue[] {
  const warnings: ConfigIssue[] = [];
  for (const [modelId, model] of Object.entries(config.models)) {
    if (model.provider !== 'openai') continue;
    for (const key of VARIABLE_KEYS) {
      const variable = model[key];
      if (variable === undefined || (env[variable] ?? '') !== '') continue;
      const path = ['models', modelId, key];
      const message = `${variable} is not set (read at each call; ${key === 'apiKeyEnv' ? 'no key is sent' : 'the default base URL is used'} while it is unset)`;
      warnings.push({ file: config.source.file, line: config.source.lineOf(path), path: formatKeyPath(path), message });
    }
  }
  return warnings;
}

/** `warning: config/agents.yaml:12 models.gpt.apiKeyEnv: OPENAI_API_KEY is not set …`. */
export function formatWarning(issue: ConfigIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}`;
  return `warning: ${where} ${issue.path}: ${issue.message}`;
}
