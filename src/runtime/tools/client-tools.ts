/**
 * Declared client tools (DESIGN §6, §8, SPEC G1): tools an outside executor runs — a browser, a mobile
 * app, another system. They are declared with a name, a description and a JSON Schema in `agents.yaml`
 * (`clientTools:`) or per operation (`execAgent({ clientTools })`, `POST /v1/operations`), offered to the
 * model like any tool the agent's `tools:` selects, and always deferred: the runtime never runs them, it
 * hands each call out and waits for `completeDeferred`. Declarations come from callers, so they are
 * bounded and checked here before anything is stored; messages name the field, never a value.
 */
import type { ToolDefinition } from './tool-types.js';

export interface ClientToolDeclaration {
  identifier: string;
  apiName: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

/** What one operation (or one config file) may declare. */
export const CLIENT_TOOL_LIMITS = Object.freeze({
  maxTools: 64,
  /** Each half of `identifier/apiName`. */
  maxNameLength: 64,
  maxDescriptionLength: 4_096,
  /** All declarations of one operation, serialized. */
  maxSerializedBytes: 64 * 1024,
});

/** Like `@Tool` names (tool.explorer.ts): they reach model wire formats and URLs. */
const NAME_PART = /^[A-Za-z0-9_.-]+$/;

/** A client tool declaration is invalid (HTTP 400 / a typed error from `execAgent`); names the field only. */
export class InvalidClientToolsError extends Error {
  override readonly name = 'InvalidClientToolsError';
  readonly code = 'invalid_request';
}

/** Checks the schema with a compiler of the caller's choice (ajv, strict); throws on an invalid schema. */
export type SchemaCompiler = (schema: Record<string, unknown>) => void;

/**
 * Validates a list of declarations (untrusted input) and returns plain copies. `field` prefixes every
 * message (`clientTools[2].parameters`). Duplicate names in one list are refused.
 */
export function validateClientTools(value: unknown, field: string, compile: SchemaCompiler): ClientToolDeclaration[] {
  if (!Array.isArray(value)) throw new InvalidClientToolsError(`${field} must be an array`);
  if (value.length > CLIENT_TOOL_LIMITS.maxTools) throw new InvalidClientToolsError(`${field} holds at most ${CLIENT_TOOL_LIMITS.maxTools} tools`);
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(value));
  } catch {
    throw new InvalidClientToolsError(`${field} must be JSON data`);
  }
  if (size > CLIENT_TOOL_LIMITS.maxSerializedBytes) throw new InvalidClientToolsError(`${field} is larger than ${CLIENT_TOOL_LIMITS.maxSerializedBytes} bytes`);
  const seen = new Set<string>();
  return value.map((entry, index) => {
    const declaration = validateOne(entry, `${field}[${index}]`, compile);
    const name = `${declaration.identifier}/${declaration.apiName}`;
    if (seen.has(name)) throw new InvalidClientToolsError(`${field}[${index}]: the tool name is declared twice`);
    seen.add(name);
    return declaration;
  });
}

function validateOne(entry: unknown, where: string, compile: SchemaCompiler): ClientToolDeclaration {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new InvalidClientToolsError(`${where} must be an object`);
  const { identifier, apiName, description, parameters, ...rest } = entry as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new InvalidClientToolsError(`${where}: unknown key (allowed: identifier, apiName, description, parameters)`);
  namePart(identifier, `${where}.identifier`);
  namePart(apiName, `${where}.apiName`);
  if (typeof description !== 'string') throw new InvalidClientToolsError(`${where}.description must be a string`);
  if (description.length > CLIENT_TOOL_LIMITS.maxDescriptionLength) {
    throw new InvalidClientToolsError(`${where}.description is longer than ${CLIENT_TOOL_LIMITS.maxDescriptionLength} characters`);
  }
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw new InvalidClientToolsError(`${where}.parameters must be a JSON Schema object`);
  }
  const schema = parameters as Record<string, unknown>;
  // Arguments arrive as one JSON object, so the schema must describe an object (as for `@Tool`).
  if (schema.type !== 'object') throw new InvalidClientToolsError(`${where}.parameters must be an object schema (type: "object")`);
  try {
    compile(schema);
  } catch {
    // The compiler's message may quote the schema: the field is enough.
    throw new InvalidClientToolsError(`${where}.parameters is not a valid JSON Schema`);
  }
  return { identifier: identifier as string, apiName: apiName as string, description, parameters: schema };
}

function namePart(value: unknown, where: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > CLIENT_TOOL_LIMITS.maxNameLength || !NAME_PART.test(value)) {
    throw new InvalidClientToolsError(`${where} must match ${NAME_PART.source} (at most ${CLIENT_TOOL_LIMITS.maxNameLength} characters)`);
  }
}

/** The catalog's view of a client tool: always deferred, never executed here. */
export function clientToolDefinition(declaration: ClientToolDeclaration): ToolDefinition {
  return Object.freeze({
    identifier: declaration.identifier,
    apiName: declaration.apiName,
    description: declaration.description,
    parameters: declaration.parameters,
    requiresApproval: false,
    deferred: true,
    source: 'client' as const,
  });
}
