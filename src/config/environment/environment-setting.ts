/**
 * One setting read from the environment and its validator (SPEC G7). Settings stay read where they are
 * used (S2: a rotated secret needs no restart); this checks them once at start so a malformed value stops
 * the start instead of failing every use.
 */
import { EnvironmentSettingError, type SettingProblem } from '../../common/environment-setting-error.js';

export interface EnvironmentSetting {
  readonly variable: string;
  /** Why `value` (set, non-empty) is malformed, or `undefined`. Never quotes the value. */
  problem(value: string): string | undefined;
}

/** The problems of the settings that are set; unset or empty ones are the defaults, never an error. */
export function environmentProblems(settings: readonly EnvironmentSetting[], env: NodeJS.ProcessEnv): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const setting of settings) {
    const value = env[setting.variable];
    if (value === undefined || value === '') continue;
    const problem = setting.problem(value);
    if (problem !== undefined) problems.push({ variable: setting.variable, problem });
  }
  return problems;
}

/** Throws `EnvironmentSettingError` listing every problem, if there is any. */
export function assertNoSettingProblems(problems: readonly SettingProblem[]): void {
  if (problems.length > 0) throw new EnvironmentSettingError(problems);
}
