/**
 * `@opentelemetry/api` is an optional peer dependency (SPEC O5): loaded once at init when the host has it,
 * otherwise tracing is off and costs one branch per span. Every copy of the API shares the globals an SDK
 * registers (`Symbol.for('opentelemetry.js.api.1')`), so spans reach whatever SDK the host set up.
 */
export type OpenTelemetryApi = typeof import('@opentelemetry/api');

export const OPEN_TELEMETRY = Symbol('nest-agent-hooks:OpenTelemetryApi');

export async function loadOpenTelemetry(): Promise<OpenTelemetryApi | null> {
  try {
    return await import('@opentelemetry/api');
  } catch {
    return null;
  }
}
