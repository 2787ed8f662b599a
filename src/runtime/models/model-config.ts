/**
 * The model entries of `agents.yaml` (DESIGN §8) as the providers take them. They live here, not in
 * `config/`, so the runtime depends on no loader: `config/` checks that its parsed output fits these types.
 */

/** One scripted tool call; `args` strings are templates (`{{prompt}}`, `{{lastToolResult}}`). */
export interface ScriptedToolCall {
  identifier: string;
  apiName: string;
  args?: Record<string, unknown>;
}

/** One scripted assistant turn: a content, tool calls, both or neither (an empty final message). */
export interface ScriptEntry {
  content?: string;
  toolCalls?: ScriptedToolCall[];
}

/** K4, for every provider: how the runtime retries the model and how long one attempt may take. */
export interface ModelCallConfig {
  /** Each field defaults to `DEFAULT_MODEL_RETRY`'s. */
  retry?: { attempts?: number; initialDelayMs?: number; maxDelayMs?: number };
  /** One attempt's deadline; a timeout is retried. */
  timeoutMs?: number;
}

export interface ScriptedModelConfig extends ModelCallConfig {
  provider: 'scripted';
  /** Cost of one token, input or output; default 0. */
  costPerTokenUsd?: number;
  script: ScriptEntry[];
}

export interface OpenAiModelConfig extends ModelCallConfig {
  provider: 'openai';
  /** The `model` field sent to the server, e.g. `gpt-4o-mini`. */
  model: string;
  /** Names the environment variable holding the base URL; default `OPENAI_BASE_URL`. */
  baseUrlEnv?: string;
  /** Names the environment variable holding the API key; default `OPENAI_API_KEY`. */
  apiKeyEnv?: string;
  costPerInputTokenUsd?: number;
  costPerOutputTokenUsd?: number;
  /** One deadline for the whole HTTP exchange, default 60; `timeoutMs` says the same in milliseconds. */
  timeoutSeconds?: number;
}

/** DESIGN §12: a model the host gave in code (`forRoot({ models: { [name]: chatModel } })`). */
export interface CodeModelConfig extends ModelCallConfig {
  provider: 'code';
  /** The key of the model in the module's `models` option. */
  name: string;
}

export type ModelConfig = ScriptedModelConfig | OpenAiModelConfig | CodeModelConfig;
