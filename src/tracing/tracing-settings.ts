/** SPEC O4: what spans may carry. Read once from the module options (`tracing`). */
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';

export interface TracingSettings {
  /** Prompts, arguments and results on spans (opt-in); secrets never. */
  captureContent: boolean;
}

export const TRACING_SETTINGS = Symbol('nest-agent-hooks:TracingSettings');

export function tracingSettings(options: AgentHooksModuleOptions): TracingSettings {
  return { captureContent: options.tracing?.captureContent === true };
}
