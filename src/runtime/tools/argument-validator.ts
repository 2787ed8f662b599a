/**
 * JSON Schema validation of tool arguments with ajv (DESIGN §10). One validator per catalog, no static
 * state. Compiled functions are cached per schema object, so a schema is compiled once however often the
 * tool runs. Error summaries never quote argument values (S1): ajv messages name the rule, not the value,
 * and path segments that are not property names declared by the schema are masked.
 */
import { Injectable } from '@nestjs/common';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

type Dialect = 'draft-07' | '2019-09' | '2020-12';
type Mode = 'strict' | 'lenient';
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/** A validator, or `null` when a server's schema could not be compiled (the server then validates alone). */
type Compiled = ValidateFunction | null;

const MAX_REPORTED_ERRORS = 5;

const BASE: Options = {
  allErrors: true,
  // Formats need ajv-formats; the tool itself is the authority on formats, so they are not checked here.
  validateFormats: false,
  // A schema with an `$id` may be compiled again (a re-listed MCP tool) without "already exists" errors.
  addUsedSchema: false,
  logger: false,
};

const MODES: Record<Mode, Options> = {
  // Our own `@Tool` schemas: unknown keywords are typos and fail the bootstrap.
  strict: { ...BASE, strict: false, strictSchema: true },
  // Schemas from MCP servers: accept what we do not know rather than refuse the tool.
  lenient: { ...BASE, strict: false },
};

export interface ArgumentCheck {
  valid: boolean;
  /** `(root) must have required property 'tz'; /count must be integer` — no values. */
  summary?: string;
}

@Injectable()
export class ArgumentValidator {
  private readonly instances = new Map<string, AnyAjv>();
  private readonly compiled = new WeakMap<object, Compiled>();

  /** Compiles a `@Tool` schema at bootstrap; throws with ajv's reason (schema text, never arguments). */
  compileStrict(schema: Record<string, unknown>): void {
    const validate = this.ajv(dialectOf(schema), 'strict').compile(schema);
    this.compiled.set(schema, validate);
  }

  /** Validates `args` against `schema`. An uncompilable server schema validates everything (`lenient`). */
  check(schema: Record<string, unknown>, args: unknown): ArgumentCheck {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      try {
        validate = this.ajv(dialectOf(schema), 'lenient').compile(schema);
      } catch {
        validate = null;
      }
      this.compiled.set(schema, validate);
    }
    if (validate === null || validate(args)) return { valid: true };
    return { valid: false, summary: summarize(validate.errors ?? []) };
  }

  private ajv(dialect: Dialect, mode: Mode): AnyAjv {
    const key = `${dialect}:${mode}`;
    let instance = this.instances.get(key);
    if (!instance) {
      const options = MODES[mode];
      instance = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
      this.instances.set(key, instance);
    }
    return instance;
  }
}

function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

function summarize(errors: readonly ErrorObject[]): string {
  const parts = errors.slice(0, MAX_REPORTED_ERRORS).map((error) => `${safePath(error)} ${error.message ?? `fails ${error.keyword}`}`);
  if (errors.length > MAX_REPORTED_ERRORS) parts.push(`and ${errors.length - MAX_REPORTED_ERRORS} more`);
  return parts.join('; ');
}

/**
 * The instance path with every segment that is not an array index or a property the schema names replaced
 * by `*`: keys of free-form maps come from the caller's data and may be sensitive.
 */
function safePath(error: ErrorObject): string {
  if (!error.instancePath) return '(root)';
  const segments = error.instancePath.split('/').slice(1);
  const schemaPath = error.schemaPath;
  return (
    '/' +
    segments.map((segment) => (/^\d+$/.test(segment) || schemaPath.includes(`/properties/${segment}/`) ? segment : '*')).join('/')
  );
}
