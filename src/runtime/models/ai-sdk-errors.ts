/**
 * An AI SDK provider's failure as our `ModelError` (K4): the HTTP status and `Retry-After` the retry policy
 * needs, a code for everything else. Recognised by shape and by the SDK's `AI_…` error names, so nothing
 * of the SDK is loaded. Never carried over: the SDK error's message, its `responseBody`, its
 * `requestBodyValues` or its cause — they quote the provider's answer and our prompt.
 */
import { parseRetryAfter } from '../../common/retry-after.js';
import { ModelError } from './chat-model.js';

/** Errors of the SDK that say the model was set up wrong rather than that the call failed. */
const CONFIGURATION_ERRORS = new Set(['AI_LoadAPIKeyError', 'AI_LoadSettingError', 'AI_UnsupportedFunctionalityError', 'AI_InvalidPromptError', 'AI_InvalidArgumentError']);
const TRANSPORT_CODE = /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/;
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Names the model in messages and summaries: the provider's model id and provider, nothing the caller sent. */
export interface AiSdkCallSite {
  modelId: string;
  provider: string;
}

export function cancelledCall(site: AiSdkCallSite): ModelError {
  return new ModelError('cancelled', `call to model ${site.modelId} (${site.provider}) was cancelled`, undefined, `model ${site.modelId}: the call was cancelled`);
}

/**
 * One typed error per failure. The caller's cancellation wins; then an HTTP answer (status and
 * `Retry-After`, K4); then what the SDK says by name; then transport failures, of which only the code is kept.
 * `whileReading`: the failure broke an answer already streaming, so an unknown error is the connection's.
 */
export function toModelError(error: unknown, site: AiSdkCallSite, signal: AbortSignal | undefined, whileReading = false): ModelError {
  if (error instanceof ModelError) return error;
  if (signal?.aborted) return cancelledCall(site);
  const where = `model ${site.modelId} (${site.provider})`;
  const name = nameOf(error);
  const status = statusOf(error);
  if (status !== undefined) {
    const retryAfterMs = retryAfterOf(error);
    return new ModelError('http_error', `${where} answered HTTP ${status}`, status, `model ${site.modelId} answered HTTP ${status}`, retryAfterMs !== undefined ? { retryAfterMs } : {});
  }
  if (name === 'TimeoutError' || TIMEOUT_CODES.has(transportCode(error) ?? '')) {
    return new ModelError('timeout', `call to ${where} timed out`, undefined, `model ${site.modelId}: did not answer in time`);
  }
  if (name === 'AbortError') return cancelledCall(site);
  // The SDK's own name for "could not reach the server" is an APICallError without a status.
  if (name === 'AI_APICallError' || transportCode(error) !== undefined || (whileReading && !name.startsWith('AI_'))) {
    const code = transportCode(error);
    return new ModelError('network_error', `call to ${where} failed${code ? ` (${code})` : ''}`, undefined, `model ${site.modelId}: could not be reached`);
  }
  if (CONFIGURATION_ERRORS.has(name)) {
    return new ModelError('configuration', `${where} refused the request as configured (${name})`, undefined, `model ${site.modelId}: is not configured correctly (${name})`);
  }
  return new ModelError('invalid_response', `${where} failed${name.startsWith('AI_') ? ` (${name})` : ''}`, undefined, `model ${site.modelId}: answered with something that is not a model response`);
}

/** An `error` part inside a stream: the provider's own error object, or an SDK error (never shown). */
export function streamedError(error: unknown, site: AiSdkCallSite, signal: AbortSignal | undefined): ModelError {
  if (nameOf(error).startsWith('AI_') || statusOf(error) !== undefined) return toModelError(error, site, signal);
  if (signal?.aborted) return cancelledCall(site);
  return new ModelError('invalid_response', `model ${site.modelId} (${site.provider}) ended its stream with an error`, undefined, `model ${site.modelId}: ended its answer with an error`);
}

function nameOf(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^[A-Za-z_]{1,64}$/.test(name) ? name : '';
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined;
}

/** OpenAI also sends `retry-after-ms`; either header, never the body. */
function retryAfterOf(error: unknown): number | undefined {
  const headers = (error as { responseHeaders?: unknown }).responseHeaders;
  if (headers === null || typeof headers !== 'object') return undefined;
  const lower = new Map(Object.entries(headers as Record<string, unknown>).map(([key, value]) => [key.toLowerCase(), value]));
  const ms = lower.get('retry-after-ms');
  if (typeof ms === 'string' && /^\d{1,10}$/.test(ms.trim())) return Number(ms.trim());
  const after = lower.get('retry-after');
  return typeof after === 'string' ? parseRetryAfter(after) : undefined;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
}

/** A socket-level code on the error or its cause (`fetch failed` keeps the real one in `cause`). */
function transportCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current !== null && typeof current === 'object' && depth < 3; current = (current as { cause?: unknown }).cause, depth++) {
    const code = codeOf(current);
    if (code !== undefined && TRANSPORT_CODE.test(code)) return code;
  }
  return undefined;
}
