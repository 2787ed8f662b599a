/** Operation ids are UUIDs (the runtime makes them): anything else names nothing, so no store is asked. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isOperationId(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
