/**
 * A call to a tool the agent was not offered (SPEC G1): what the model, the hooks and the conversation see.
 * The name comes from the model, so it may be anything — thousands of characters, `../`, NUL, unpaired
 * surrogates. It is made storable (control characters replaced, cut to fit the name columns, the same on
 * SQLite and PostgreSQL) and shown cut to 200 characters.
 */
export const TOOL_NOT_AVAILABLE = 'tool_not_available';

/** How much of the name the content shows (G1). */
export const SHOWN_TOOL_NAME_LENGTH = 200;
/** Each half as stored (the name columns hold 255 characters on both databases). */
export const STORED_NAME_PART_LENGTH = 200;

// C0 controls (NUL included: PostgreSQL text cannot hold it), DEL and C1 controls; unpaired surrogates.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced.
const UNSTORABLE = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A name half the database can store: control characters and unpaired surrogates replaced, cut by code points. */
export function storableNamePart(value: unknown, max = STORED_NAME_PART_LENGTH): string {
  const text = typeof value === 'string' ? value : '';
  return cut(text.replace(UNSTORABLE, '\ufffd'), max);
}

/** The content of the published tool error: names the tool (cut to 200 characters), says why. */
export function unavailableToolContent(identifier: string, apiName: string): string {
  return `Error: the tool ${cut(`${identifier}/${apiName}`, SHOWN_TOOL_NAME_LENGTH)} is not available to this agent (${TOOL_NOT_AVAILABLE})`;
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  // By code points, so a surrogate pair is never split.
  return Array.from(text).slice(0, max).join('');
}
