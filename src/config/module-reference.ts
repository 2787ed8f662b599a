/**
 * `module/path:Export` references (DESIGN §8): a plugin class in plugins.toml (`plugins/hooks/audit:Audit`),
 * or a hook function in a `ref:` entry (`plugins/hooks/policy:denyDangerous`), where a `Class.method`
 * export also works (`plugins/hooks/policy:Policy.deny`). The module path is everything before the last
 * `:`, so a Windows drive letter stays part of the path.
 */
export interface ModuleReference {
  readonly modulePath: string;
  /** The module's export: a class, a function, or an object holding `member`. */
  readonly exportName: string;
  /** `Class.method`: the method (of an instance of the class, or of the export itself). */
  readonly member?: string;
}

/** A JavaScript identifier: export names and method names. */
export const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Parses a reference; `allowMember` admits `Class.method`. Returns the problem as fixed text (never
 * quoting the reference) when it is malformed.
 */
export function parseModuleReference(text: string, allowMember: boolean): ModuleReference | string {
  const expected = allowMember ? '"module/path:export" or "module/path:Class.method"' : '"module/path:ClassName"';
  const colon = text.lastIndexOf(':');
  if (colon <= 0) return `must be ${expected}`;
  const modulePath = text.slice(0, colon).trim();
  const target = text.slice(colon + 1).trim();
  if (modulePath === '' || /[\0\n\r]/.test(modulePath)) return `must be ${expected}: the module path is missing or invalid`;
  const [exportName, member, ...extra] = target.split('.');
  if (exportName === undefined || !IDENTIFIER.test(exportName) || extra.length > 0) return `must be ${expected}: the export must be a JavaScript identifier`;
  if (member === undefined) return { modulePath, exportName };
  if (!allowMember) return `must be ${expected}: name the class only`;
  if (!IDENTIFIER.test(member)) return `must be ${expected}: the method must be a JavaScript identifier`;
  return { modulePath, exportName, member };
}
