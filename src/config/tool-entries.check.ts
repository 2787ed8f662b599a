/**
 * Fails app bootstrap when a `tools:` entry selects nothing (SPEC G7), naming file, line and key. Runs at
 * `onApplicationBootstrap`: local tools are only known once every module has initialised and the tool
 * explorer has registered them. A queue-mode process that runs no steps (`queue.worker: false`, an API
 * process) offers no tools, so it does not check: the workers that run the steps do, at their own start.
 */
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { QUEUE_SETTINGS, type QueueSettings } from '../queue/queue-settings.js';
import { LocalToolRegistry } from '../runtime/tools/local-tool.registry.js';
import type { AgentsConfig } from './agents-config.js';
import { AGENTS_CONFIG } from './agents-config.provider.js';
import { AgentsConfigError } from './config-error.js';
import { knownToolsOf, toolEntryIssues } from './tool-entry-selection.js';

@Injectable()
export class ToolEntriesCheck implements OnApplicationBootstrap {
  constructor(
    @Inject(AGENTS_CONFIG) private readonly config: AgentsConfig | Pick<AgentsConfig, 'agents' | 'mcpServers'>,
    private readonly local: LocalToolRegistry,
    @Inject(QUEUE_SETTINGS) private readonly queue: QueueSettings,
  ) {}

  onApplicationBootstrap(): void {
    const config = this.config;
    // Without a config file there are no agents to check.
    if (!('source' in config) || (this.queue.enabled && !this.queue.worker)) return;
    const localNames = this.local.all().map(({ definition }) => `${definition.identifier}/${definition.apiName}`);
    const issues = toolEntryIssues(config, knownToolsOf(config, localNames));
    if (issues.length > 0) throw new AgentsConfigError(issues);
  }
}
