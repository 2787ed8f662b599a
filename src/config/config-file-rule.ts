/**
 * Which agents config a process loads — one rule for `AgentHooksModule.forRoot` and `agentctl`:
 * the file given (it must exist); `false`, none; not given, `config/agents.yaml` in the working folder
 * when it exists, else none (the module then runs without agents: hooks and tools registered in code).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';

/** The default config file, relative to the working folder. */
export const DEFAULT_CONFIG_FILE = 'config/agents.yaml';

export function configFileToLoad(configFile: string | false | undefined, cwd: string = process.cwd()): string | undefined {
  if (configFile === false) return undefined;
  if (configFile !== undefined) return configFile;
  return isFile(resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
