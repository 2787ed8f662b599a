/**
 * The module reference `agentctl generate` writes for a new plugin id (DESIGN §8, SPEC E5):
 * `research_hooks` → `plugins/hooks/research-hooks:ResearchHooks`. One naming rule, so the generated
 * manifest and the file a developer creates next agree without a lookup.
 */

/** The words of a plugin id: split on `_` / `-` and on lower→upper case changes (`researchHooks`). */
function idWords(id: string): string[] {
  return id
    .split(/[_-]+|(?<=[a-z0-9])(?=[A-Z])/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

export function kebabCase(id: string): string {
  return idWords(id).join('-');
}

export function pascalCase(id: string): string {
  const name = idWords(id)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
  // Plugin ids may start with a digit; a class name may not.
  return /^[0-9]/.test(name) ? `Plugin${name}` : name;
}

export function defaultPluginReference(id: string): string {
  return `plugins/hooks/${kebabCase(id)}:${pascalCase(id)}`;
}
