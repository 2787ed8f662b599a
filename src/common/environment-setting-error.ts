/**
 * A server secret or setting read from the environment (or given as a module option) is malformed (SPEC
 * G7). Thrown at start, so nothing runs with it; `code` makes agentctl exit 2. The message names the
 * variable (or option) and what is wrong with it, never its value.
 */
export class EnvironmentSettingError extends Error {
  override readonly name = 'EnvironmentSettingError';
  readonly code = 'configuration';

  constructor(readonly problems: readonly SettingProblem[]) {
    super(problems.map(({ variable, problem }) => `${variable}: ${problem}`).join('\n'));
  }

  /** The first variable named, for callers that report one. */
  get variable(): string {
    return this.problems[0]?.variable ?? '';
  }
}

export interface SettingProblem {
  /** The variable (`AGENT_HOOKS_WEBHOOK_SECRET`) or module option (`webhooks.signingSecret`). */
  readonly variable: string;
  /** What is wrong, in fixed words: never the value. */
  readonly problem: string;
}
