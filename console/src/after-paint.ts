/** Runs `then` once the frame holding the current DOM has been laid out and painted (for performance marks). */
export function afterPaint(then: () => void): void {
  requestAnimationFrame(() => setTimeout(then, 0));
}
