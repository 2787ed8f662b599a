/**
 * Scripted-model templates (DESIGN §8): `{{prompt}}` and `{{lastToolResult}}` in every string of a script
 * entry. One pass over the template, so a prompt that itself contains `{{lastToolResult}}` stays literal.
 */
export interface TemplateValues {
  prompt: string;
  lastToolResult: string;
}

const PLACEHOLDER = /\{\{(prompt|lastToolResult)\}\}/g;

export function fillTemplate(template: string, values: TemplateValues): string {
  return template.replace(PLACEHOLDER, (_match, name: keyof TemplateValues) => values[name]);
}

/**
 * Fills every string inside `value`, recursively through arrays and objects; keys and non-string
 * scalars are kept as they are. Always returns a fresh structure, so the script itself is never mutated.
 */
export function fillTemplates(value: unknown, values: TemplateValues): unknown {
  if (typeof value === 'string') return fillTemplate(value, values);
  if (Array.isArray(value)) return value.map((item) => fillTemplates(item, values));
  if (typeof value === 'object' && value !== null) {
    const filled: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a `__proto__` key stays an own field instead of replacing the prototype.
      Object.defineProperty(filled, key, { value: fillTemplates(item, values), enumerable: true, writable: true, configurable: true });
    }
    return filled;
  }
  return value;
}
