/**
 * An OpenAI-compatible Chat Completions provider with tool calling (DESIGN §8, §10). `undici.request` on a
 * dedicated Agent: no global dispatcher, proxy variables, redirects or retries. The base URL and the key
 * are read from the environment at call time, so a rotated key needs no restart; the key goes into the
 * Authorization header and nowhere else. Errors are `ModelError`s naming the model and host, never the
 * key, the request or the response body.
 */
import { Logger } from '@nestjs/common';
import { Agent, request, type Dispatcher } from 'undici';
import { ModelError, type ChatCallOptions, type ChatModel, type ChatRequest, type ChatResponse } from './chat-model.js';
import type { OpenAiModelConfig } from './model-config.js';
import { RequestDeadline } from '../../common/request-deadline.js';
import { parseRetryAfter } from '../../common/retry-after.js';
import { ToolNameTable } from './openai-tool-names.js';
import { OpenAiStreamReader } from './openai-stream.js';
import { fromWireResponse, toWireRequest } from './openai-wire.js';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_BASE_URL_ENV = 'OPENAI_BASE_URL';
export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY';
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 60;
/** A completion is small; a larger body is a broken or hostile server. */
const RESPONSE_BODY_LIMIT = 8 * 1024 * 1024;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export interface OpenAiChatModelOptions {
  /** Where `baseUrlEnv` and `apiKeyEnv` are read, at every call; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Concurrent connections to the endpoint; further requests queue inside their deadline. Default 16. */
  connections?: number;
}

export class OpenAiChatModel implements ChatModel {
  private readonly agent: Agent;
  private readonly env: NodeJS.ProcessEnv;
  private readonly timeoutMs: number;
  private readonly logger = new Logger('AgentHooks:Models');
  /** Said once per model: a server that streams without usage keeps doing so. */
  private saidNoUsage = false;

  constructor(
    private readonly config: OpenAiModelConfig,
    options: OpenAiChatModelOptions = {},
  ) {
    if (typeof config.model !== 'string' || config.model === '') throw new ModelError('configuration', 'openai model: model must be a non-empty string');
    if (config.timeoutMs !== undefined) {
      if (!(config.timeoutMs > 0) || !Number.isFinite(config.timeoutMs)) throw new ModelError('configuration', `openai model ${config.model}: timeoutMs must be a positive number`);
      this.timeoutMs = config.timeoutMs;
    } else {
      const seconds = config.timeoutSeconds ?? DEFAULT_MODEL_TIMEOUT_SECONDS;
      if (!(seconds > 0) || !Number.isFinite(seconds)) throw new ModelError('configuration', `openai model ${config.model}: timeoutSeconds must be a positive number`);
      this.timeoutMs = seconds * 1000;
    }
    this.env = options.env ?? process.env;
    this.agent = new Agent({
      connections: options.connections ?? 16,
      // The request deadline governs headers and body; undici's own 300 s timers would only cut it short.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** Streams (K5, `stream: true`) when the runtime passes `onDelta`; asks for the whole answer otherwise. */
  async complete(chat: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
    const url = this.endpoint();
    const where = `model ${this.config.model} at ${url.host}`;
    const signal = options.signal ?? chat.signal;
    if (signal?.aborted) throw cancelled(where);
    const names = new ToolNameTable(chat.tools);
    const onDelta = options.onDelta;
    const body = JSON.stringify(toWireRequest(this.config.model, chat, onDelta !== undefined));
    const deadline = new RequestDeadline(this.timeoutMs, signal);
    try {
      const response = await request(url, {
        dispatcher: this.agent,
        method: 'POST',
        headers: this.headers(onDelta !== undefined),
        body,
        signal: deadline.signal,
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        // Never read: an error body may echo the request or carry details not meant for logs.
        discard(response.body);
        // K4: a rate-limited or unavailable server may say when to come back; a header, never the body.
        const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
        throw new ModelError('http_error', `${where} answered HTTP ${response.statusCode}`, response.statusCode, undefined, retryAfterMs !== undefined ? { retryAfterMs } : {});
      }
      // A server that ignores `stream` answers with the whole completion; it is read as one.
      const streamed = onDelta !== undefined && String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
      const json = streamed ? await readStream(response.body, where, onDelta) : await readJson(response.body, where);
      if (deadline.cancelled) throw cancelled(where);
      const answer = fromWireResponse(json, names);
      if (!answer) throw new ModelError('invalid_response', `${where} answered with JSON that is not a chat completion with at least one choice`);
      if (streamed && !this.saidNoUsage && (json as { usage?: unknown }).usage === undefined) {
        // F4: without usage, token and cost budgets cannot count this model's answers.
        this.saidNoUsage = true;
        this.logger.warn(`${where} streamed an answer without usage (stream_options.include_usage not honoured): maxTokens and maxCostUsd cannot count its answers`);
      }
      // The answer arrived whole: its text is one delta, so the deltas of a call still make up its content.
      if (onDelta && !streamed && answer.content !== '') onDelta(answer.content);
      const inputCost = this.config.costPerInputTokenUsd ?? 0;
      const outputCost = this.config.costPerOutputTokenUsd ?? 0;
      return {
        content: answer.content,
        toolCalls: answer.toolCalls,
        usage: {
          inputTokens: answer.promptTokens,
          outputTokens: answer.completionTokens,
          costUsd: answer.promptTokens * inputCost + answer.completionTokens * outputCost,
        },
      };
    } catch (error) {
      throw this.summarized(failure(error, deadline, where));
    } finally {
      deadline.dispose();
    }
  }

  /** Closes pooled connections once in-flight requests finish (each is bounded by its deadline). */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** `<base>/chat/completions`, keeping a query string (some gateways version their API with one). */
  private endpoint(): URL {
    const variable = this.config.baseUrlEnv ?? DEFAULT_BASE_URL_ENV;
    const raw = this.env[variable];
    const base = raw === undefined || raw === '' ? DEFAULT_OPENAI_BASE_URL : raw;
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      throw new ModelError('configuration', `model ${this.config.model}: ${variable} is not a valid absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ModelError('configuration', `model ${this.config.model}: ${variable} must be an http or https URL`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new ModelError('configuration', `model ${this.config.model}: ${variable} must not embed credentials`);
    }
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
    url.hash = '';
    return url;
  }

  /**
   * The error with its safe summary (DESIGN §7): the model id, the HTTP status, and — when the server
   * refused the credentials and the key variable is unset — that variable's name. Nothing else.
   */
  private summarized(error: ModelError): ModelError {
    if (error.summary !== undefined) return error;
    const model = `model ${this.config.model}`;
    let summary = `${model}: ${MODEL_FAILURES[error.code]}`;
    if (error.code === 'http_error') {
      summary = `${model} answered HTTP ${error.status ?? 'error'}`;
      const variable = this.config.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
      const key = this.env[variable];
      if ((error.status === 401 || error.status === 403) && (key === undefined || key === '')) summary += ` (${variable} is not set)`;
    }
    return new ModelError(error.code, error.message, error.status, summary, error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {});
  }

  private headers(stream: boolean): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
    // Local OpenAI-compatible servers often need no key: an unset or empty variable sends none.
    const key = this.env[this.config.apiKeyEnv ?? DEFAULT_API_KEY_ENV];
    if (key !== undefined && key !== '') headers.authorization = `Bearer ${key}`;
    return headers;
  }
}

/** Reads the body as UTF-8 up to the limit; a larger body is `invalid_response`. */
async function readBody(body: Dispatcher.ResponseData['body'], where: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > RESPONSE_BODY_LIMIT) {
      discard(body);
      throw new ModelError('invalid_response', `${where} answered with a body larger than ${RESPONSE_BODY_LIMIT} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(body: Dispatcher.ResponseData['body'], where: string): Promise<unknown> {
  const text = await readBody(body, where);
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelError('invalid_response', `${where} answered with a body that is not valid JSON`);
  }
}

/**
 * K5: reads a streamed answer, handing each piece of its text to `onDelta` as it arrives, up to the body
 * limit. A stream cut before it finished is a `network_error` (retried, K4); a chunk that is not a
 * completion chunk is `invalid_response`.
 */
async function readStream(body: Dispatcher.ResponseData['body'], where: string, onDelta: (text: string) => void): Promise<unknown> {
  const reader = new OpenAiStreamReader(onDelta);
  const decoder = new TextDecoder();
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > RESPONSE_BODY_LIMIT) {
      discard(body);
      throw new ModelError('invalid_response', `${where} answered with a body larger than ${RESPONSE_BODY_LIMIT} bytes`);
    }
    if (!reader.push(decoder.decode(chunk, { stream: true }))) {
      discard(body);
      break;
    }
  }
  reader.push(decoder.decode());
  const answer = reader.answer();
  if (reader.problem === 'ended_early') throw new ModelError('network_error', `the stream of ${where} ended before the answer did`);
  if (!answer) throw new ModelError('invalid_response', `${where} streamed something that is not a chat completion chunk`);
  return answer;
}

/** Destroying an unread body aborts the request; its abort error has nowhere to go, so it is swallowed. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** What a failure of each kind means, for the summary (the status and variable are added where known). */
const MODEL_FAILURES: Record<ModelError['code'], string> = {
  http_error: 'answered with an HTTP error',
  network_error: 'could not be reached',
  timeout: 'did not answer in time',
  invalid_response: 'answered with something that is not a chat completion',
  cancelled: 'the call was cancelled',
  configuration: 'is not configured correctly (check its base URL and API key variables)',
};

function cancelled(where: string): ModelError {
  return new ModelError('cancelled', `call to ${where} was cancelled`);
}

/**
 * One typed error per failure. A caller's cancellation wins over everything, then errors we raised
 * ourselves, then the deadline, then transport failures, of which only the error code is kept (a
 * transport message may quote a header, and the Authorization header holds the key).
 */
function failure(error: unknown, deadline: RequestDeadline, where: string): ModelError {
  if (deadline.cancelled) return error instanceof ModelError && error.code === 'cancelled' ? error : cancelled(where);
  if (error instanceof ModelError) return error;
  if (deadline.timedOut) return new ModelError('timeout', `call to ${where} timed out after ${deadline.timeoutMs} ms`);
  const code = codeOf(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new ModelError('timeout', `call to ${where} timed out (${code})`);
  if (code === 'UND_ERR_INVALID_ARG') return new ModelError('configuration', `call to ${where} has an invalid header (check the API key variable)`);
  return new ModelError('network_error', `call to ${where} failed${code === undefined ? '' : ` (${code})`}`);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
}
