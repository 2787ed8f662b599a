/**
 * Fails module initialisation on a malformed webhook or queue setting (SPEC G7), so an app never starts
 * with, say, a signing secret that would make every webhook fail with `configuration` (and a deny policy
 * under the default `onError` be skipped).
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../../agent-hooks.options.js';
import { assertNoSettingProblems } from './environment-setting.js';
import { moduleSettingProblems } from './module-settings.js';

@Injectable()
export class EnvironmentSettingsCheck implements OnModuleInit {
  constructor(@Inject(AGENT_HOOKS_MODULE_OPTIONS) private readonly options: AgentHooksModuleOptions) {}

  onModuleInit(): void {
    assertNoSettingProblems(moduleSettingProblems(this.options));
  }
}
