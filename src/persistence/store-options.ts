/** Options every store accepts. */

export interface StoreOptions {
  /**
   * The time stamped on rows and compared with lease deadlines; default the system clock. Leases compare
   * app-clock times, so workers sharing a database need roughly synchronized clocks (NTP), with lease
   * lengths well above the skew.
   */
  clock?: () => Date;
}

export function nowIso(options: StoreOptions): string {
  return (options.clock?.() ?? new Date()).toISOString();
}
