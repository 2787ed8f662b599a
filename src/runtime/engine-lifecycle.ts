/**
 * `on_engine_start` once before anything is served, `on_engine_stop` once at shutdown, best-effort (E2).
 * Bootstrap hooks run after module init, so every `@OnHook` is bound; a `fail` hook error stops the start
 * with a `HookFailedError` naming the hook.
 */
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { EngineContext } from '../hooks/contexts.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { AGENT_DIRECTORY, type AgentDirectory } from './agent-directory.port.js';

@Injectable()
export class EngineLifecycle implements OnApplicationBootstrap {
  private started = false;

  constructor(
    private readonly dispatcher: HookDispatcher,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.dispatcher.dispatch('on_engine_start', this.context(), { metadata: this.agents.metadata });
    this.started = true;
  }

  /** `on_engine_stop`; the `ShutdownCoordinator` calls it after the last step, before any client closes (G4). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    // Never propagates (the dispatcher logs failures at this point).
    await this.dispatcher.dispatch('on_engine_stop', this.context(), { metadata: this.agents.metadata });
  }

  private context(): EngineContext {
    return new EngineContext({ systemName: this.agents.systemName, metadata: { ...this.agents.metadata } });
  }
}
