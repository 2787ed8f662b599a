/**
 * Engine-family contexts are recognised by a registered brand, not `instanceof` (DESIGN §6): a plugin that
 * imports the built package and a test that imports the sources hold different class objects, yet agree on
 * `Symbol.for` keys and brand names.
 */
export const CONTEXT_BRAND: unique symbol = Symbol.for('nest-agent-hooks.context-brand') as never;

/** A class whose instances carry a brand (its own and its ancestors'). */
export interface BrandedClass<T> {
  readonly brand: string;
  readonly prototype: T;
}

/** Stamps `instance` with its class brands; called last in every context constructor. */
export function stampBrands(instance: object, brands: readonly string[]): void {
  Object.defineProperty(instance, CONTEXT_BRAND, { value: Object.freeze([...brands]), enumerable: false });
}

export function brandsOf(value: unknown): readonly string[] {
  if (value === null || typeof value !== 'object') return [];
  const brands = (value as { [CONTEXT_BRAND]?: unknown })[CONTEXT_BRAND];
  return Array.isArray(brands) ? (brands as string[]) : [];
}

export function hasBrand(value: unknown, brand: string): boolean {
  return brandsOf(value).includes(brand);
}
