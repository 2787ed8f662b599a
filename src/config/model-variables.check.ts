/** Logs, at module init, the unset model variables of agents.yaml (SPEC G7: a warning, never an error). */
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { AgentsConfig } from './agents-config.js';
import { AGENTS_CONFIG } from './agents-config.provider.js';
import { formatIssue } from './config-error.js';
import { modelVariableWarnings } from './model-variable-warnings.js';

@Injectable()
export class ModelVariablesCheck implements OnModuleInit {
  private readonly logger = new Logger('AgentHooks:Config');

  constructor(@Inject(AGENTS_CONFIG) private readonly config: AgentsConfig | Pick<AgentsConfig, 'models'>) {}

  onModuleInit(): void {
    const config = this.config;
    if (!('source' in config)) return;
    for (const warning of modelVariableWarnings(config)) this.logger.warn(formatIssue(warning)); // the level says it is a warning
  }
}
