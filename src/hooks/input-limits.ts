/**
 * The limits on untrusted input (SPEC G6), in one place. Every room that accepts input from callers,
 * config files or models imports them from here (hooks/ imports nothing from the other rooms).
 */

/**
 * Tool identifiers and apiNames, hook ids and agent ids. The database columns are `varchar(255)`: PostgreSQL
 * refuses a longer value while SQLite stores it, so anything longer is refused before it gets that far.
 */
export const MAX_IDENTIFIER_LENGTH = 255;

/** A matcher or an agent `approval` / `deferred` pattern, in characters. */
export const MAX_PATTERN_LENGTH = 1024;

/**
 * Estimated compiled size (re2js program instructions) of one pattern. A 1,024-character literal or an
 * alternation of a few dozen tool names needs ~1,000; `a{1000}` repeated needs millions (seconds of CPU and
 * hundreds of MB), which the estimate catches before compiling.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 5_000;

/** Estimated compiled size of every pattern of one registration: one operation's caller hooks, one agent. */
export const MAX_REGISTRATION_PROGRAM_SIZE = 20_000;

/** Edited arguments of an approval (F6), serialized as JSON, in bytes (UTF-8): a request body's limit. */
export const MAX_EDITED_ARGS_BYTES = 1024 * 1024;

/** Nesting depth of a JSON request body (objects and arrays). */
export const MAX_JSON_DEPTH = 64;

/** `context.metadata`, serialized as JSON, in bytes (UTF-8). */
export const MAX_METADATA_BYTES = 16 * 1024;
