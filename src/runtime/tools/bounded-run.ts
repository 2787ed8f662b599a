/**
 * Runs one tool execution under its deadline and the operation's AbortSignal. The work gets a signal of its
 * own that aborts on either, so a cooperative tool (or an MCP request) stops; the caller is answered at the
 * deadline or cancellation even if the work ignores the signal.
 */
import { ToolError } from './tool-types.js';

export interface BoundedRunOptions {
  /** `identifier/apiName`, for messages. */
  toolName: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** F3: the work settled after its deadline had passed; its value (or error) is dropped. */
  onLate?: () => void;
}

export function runBounded<T>(work: (signal: AbortSignal) => Promise<T> | T, options: BoundedRunOptions): Promise<T> {
  const { toolName, timeoutMs, signal } = options;
  let timedOut = false;
  if (signal.aborted) return Promise.reject(cancelled(toolName));
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      const error = cancelled(toolName);
      controller.abort(error);
      reject(error);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
      const error = new ToolError('timeout', `${toolName} timed out after ${timeoutMs} ms`, 'TimeoutError');
      controller.abort(error);
      reject(error);
    }, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    let running: Promise<T>;
    try {
      running = Promise.resolve(work(controller.signal));
    } catch (error) {
      running = Promise.reject(error);
    }
    // F3: a settlement after the deadline never replaces the timeout (nor is it an unhandled rejection).
    const late = () => {
      if (timedOut) options.onLate?.();
    };
    running.then(
      (value) => {
        late();
        finish();
        resolve(value);
      },
      (error: unknown) => {
        late();
        finish();
        reject(error);
      },
    );
  });
}

function cancelled(toolName: string): ToolError {
  return new ToolError('cancelled', `${toolName} was cancelled`, 'AbortError');
}
