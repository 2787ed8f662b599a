/** The tracing room's providers (SPEC O1–O5): the optional OpenTelemetry API, loaded once, and the tracer over it. */
import type { Provider } from '@nestjs/common';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { AgentTracer } from './agent-tracer.js';
import { OPEN_TELEMETRY, loadOpenTelemetry } from './open-telemetry.js';
import { TRACING_SETTINGS, tracingSettings } from './tracing-settings.js';

export const TRACING_PROVIDERS: Provider[] = [
  { provide: TRACING_SETTINGS, useFactory: (options: AgentHooksModuleOptions) => tracingSettings(options), inject: [AGENT_HOOKS_MODULE_OPTIONS] },
  { provide: OPEN_TELEMETRY, useFactory: loadOpenTelemetry },
  AgentTracer,
];
