/** What an engine-family hook method receives (E7, DESIGN §6). */
import { brandsOf, hasBrand } from './context-brand.js';
import type { RunContext } from './contexts.js';
import type { HookPoint } from './hook-points.js';

type AnyClass<T> = (abstract new (...args: never[]) => T) & { readonly brand?: string };

export class HookInvocation<TPayload = unknown> {
  readonly point: HookPoint;
  readonly plugin?: string;
  readonly method?: string;
  readonly ref?: string;
  readonly runContext?: RunContext;
  readonly payload: TPayload;
  readonly metadata: Readonly<Record<string, unknown>>;

  constructor(init: {
    point: HookPoint;
    payload: TPayload;
    plugin?: string;
    method?: string;
    ref?: string;
    runContext?: RunContext;
    metadata?: Readonly<Record<string, unknown>>;
  }) {
    this.point = init.point;
    this.payload = init.payload;
    if (init.plugin !== undefined) this.plugin = init.plugin;
    if (init.method !== undefined) this.method = init.method;
    if (init.ref !== undefined) this.ref = init.ref;
    if (init.runContext !== undefined) this.runContext = init.runContext;
    this.metadata = init.metadata ?? EMPTY;
    Object.freeze(this);
  }

  /**
   * The payload as the point's typed context. Branded classes match by brand, so copies of the package
   * agree; other classes (e.g. `Error` at `on_run_error`) by `instanceof`. A mismatch is a `TypeError`.
   */
  payloadAs<T>(type: AnyClass<T>): T {
    const brand = Object.prototype.hasOwnProperty.call(type, 'brand') ? type.brand : undefined;
    const ok = typeof brand === 'string' ? hasBrand(this.payload, brand) : this.payload instanceof type;
    if (!ok) {
      const actual = brandsOf(this.payload)[0] ?? describe(this.payload);
      throw new TypeError(`payloadAs(${brand ?? type.name}) at ${this.point}: the payload is a ${actual}`);
    }
    return this.payload as unknown as T;
  }
}

const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return (value as object).constructor?.name ?? 'object';
  return typeof value;
}
