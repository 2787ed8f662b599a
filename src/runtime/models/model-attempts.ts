/**
 * One failed attempt of a model call (SPEC K2, K4), as the model-call layer reports it to whoever governs
 * the call: `onModelCallError` fires once per failed attempt. Never a provider's body: a type and a status.
 */
export interface ModelAttemptFailure {
  model: string;
  attempt: number;
  error: { type: string; status?: number };
  willRetry: boolean;
  nextModel?: string;
}

export interface ModelAttemptObserver {
  attemptFailed(failure: ModelAttemptFailure): void;
}
