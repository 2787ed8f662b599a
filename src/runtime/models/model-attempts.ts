/**
 * K4: one model call as a sequence of attempts. A failure worth another try (model-retry-policy.ts) is
 * retried on the same model after a backoff; once a model's attempts are spent — or it failed in a way a
 * retry would not fix — the agent's fallback models are tried in order, each with its own retries. A cancel
 * ends a backoff wait at once. The answer carries the usage of every attempt; when every attempt fails, the
 * last failure is thrown as it is. What observers learn of a failure is its type and status, never a body.
 */
import { ModelError, type ChatModel, type ChatRequest, type ChatResponse, type ChatUsage } from './chat-model.js';
import { attemptFailure, retryDelayMs, type ModelRetrySettings } from './model-retry-policy.js';

export interface ModelAttemptFailure {
  model: string;
  attempt: number;
  error: { type: string; status?: number };
  willRetry: boolean;
  nextModel?: string;
}

/** Hears of every failed attempt (K4: `onModelCallError` fires once per failed attempt); must not throw. */
export interface ModelAttemptObserver {
  attemptFailed(failure: ModelAttemptFailure): void;
}

/** One model an agent may call, with its own retries and deadline (K4). */
export interface ModelCandidate {
  /** What spans, observers and summaries name the model (`gen_ai.request.model`). */
  name: string;
  provider?: string;
  model: ChatModel;
  retry: ModelRetrySettings;
  /** Aborts an attempt after this long; a `timeout` is retried like a network error. */
  timeoutMs?: number;
}

/** Runs one attempt (the caller wraps it in its span); `attempt` counts from 1 per model. */
export type RunAttempt = (candidate: ModelCandidate, request: ChatRequest, attempt: number) => Promise<ChatResponse>;

export interface ModelAttemptOptions {
  observer?: ModelAttemptObserver;
  /** The jitter's random source; default `Math.random`. */
  random?: () => number;
}

/** The first answer of `candidates` in order, each tried up to its `retry.attempts`; else the last failure. */
export function completeWithAttempts(
  candidates: readonly ModelCandidate[],
  request: ChatRequest,
  run: RunAttempt,
  options: ModelAttemptOptions = {},
): Promise<ChatResponse> {
  const first = candidates[0];
  // Reached only with no candidate at all: the directory always gives the agent's own model.
  if (!first) return Promise.reject(new ModelError('configuration', 'the agent has no model to call'));
  // The first attempt's answer goes straight back: no frame of the retry loop on the path of a call that succeeds.
  return attemptOnce(run, first, request, 1).catch((error: unknown) => afterFailure(candidates, request, run, options, error));
}

/** The retry loop, entered with the first attempt's failure. */
async function afterFailure(candidates: readonly ModelCandidate[], request: ChatRequest, run: RunAttempt, options: ModelAttemptOptions, firstError: unknown): Promise<ChatResponse> {
  const { signal } = request;
  let failedUsage: ChatUsage | undefined;
  let index = 0;
  let attempt = 1;
  let error = firstError;
  for (;;) {
    // A cancel is the caller's decision, not the model's failure: nothing to retry, nothing to report.
    if (signal?.aborted || (error instanceof ModelError && error.code === 'cancelled')) throw error;
    const candidate = candidates[index]!;
    const failure = attemptFailure(error);
    if (error instanceof ModelError && error.usage) failedUsage = failedUsage ? sumUsage(failedUsage, error.usage) : error.usage;
    const willRetry = failure.retryable && attempt < candidate.retry.attempts;
    const next = willRetry ? undefined : candidates[index + 1];
    options.observer?.attemptFailed({
      model: candidate.name,
      attempt,
      error: { type: failure.type, ...(failure.status !== undefined ? { status: failure.status } : {}) },
      willRetry,
      ...(next ? { nextModel: next.name } : {}),
    });
    if (willRetry) {
      const delay = retryDelayMs(candidate.retry, attempt, failure.retryAfterMs, options.random);
      if (!(await backoff(delay, signal))) throw new ModelError('cancelled', `call to model ${candidate.name} was cancelled while waiting to retry`, undefined, `model ${candidate.name}: the call was cancelled`);
      attempt++;
    } else if (next) {
      index++;
      attempt = 1;
    } else {
      // The last failure itself (run() rejects with the very error, A3): its summary names the model and status.
      throw error;
    }
    try {
      const response = await attemptOnce(run, candidates[index]!, request, attempt);
      return failedUsage ? { ...response, usage: sumUsage(failedUsage, response.usage) } : response;
    } catch (caught) {
      error = caught;
    }
  }
}

/** One attempt under the candidate's deadline, when it has one. */
function attemptOnce(run: RunAttempt, candidate: ModelCandidate, request: ChatRequest, attempt: number): Promise<ChatResponse> {
  if (candidate.timeoutMs === undefined) return run(candidate, request, attempt);
  const caller = request.signal;
  const aborter = new AbortController();
  const onCancel = (): void => aborter.abort();
  caller?.addEventListener('abort', onCancel, { once: true });
  if (caller?.aborted) aborter.abort();
  let timer: NodeJS.Timeout | undefined;
  // Raced as well as aborted: a provider that ignores its signal still ends at the deadline.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      aborter.abort();
      reject(new ModelError('timeout', `call to model ${candidate.name} timed out after ${candidate.timeoutMs} ms`, undefined, `model ${candidate.name}: did not answer within ${candidate.timeoutMs} ms`));
    }, candidate.timeoutMs);
  });
  const answered = run(candidate, { ...request, signal: aborter.signal }, attempt);
  // The loser of the race settles unobserved; its outcome is already decided by the winner.
  answered.catch(() => undefined);
  deadline.catch(() => undefined);
  return Promise.race([answered, deadline]).finally(() => {
    clearTimeout(timer);
    caller?.removeEventListener('abort', onCancel);
  });
}

/** Waits `ms`; false when the caller cancelled first (K4: a cancel ends the wait at once). */
function backoff(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onCancel = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onCancel);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onCancel, { once: true });
  });
}

function sumUsage(a: ChatUsage, b: ChatUsage): ChatUsage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, costUsd: a.costUsd + b.costUsd };
}
