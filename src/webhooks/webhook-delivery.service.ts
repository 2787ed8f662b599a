/**
 * Sends hook webhooks for the dispatcher (the `WebhookDeliveryPort` of `hooks/`): builds the payload,
 * resolves header templates at send time, signs, and posts through the hardened client. Queue and QStash
 * notifications go through the queued-delivery port, falling back to one direct post unless
 * `fallback: 'none'` (D3).
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AGENT_HOOKS_MODULE_OPTIONS } from '../agent-hooks.module-definition.js';
import type { AgentHooksModuleOptions } from '../agent-hooks.options.js';
import { errorCode } from '../hooks/hook-errors.js';
import { HOOK_POINTS } from '../hooks/hook-points.js';
import type { WebhookDeliveryPort, WebhookRequest } from '../hooks/hook-ports.js';
import type { AgentHookWebhook } from '../hooks/agent-hook.js';
import { USER_DIRECTORY, WebhookPayloadBuilder, type UserDirectory } from './payload-builder.js';
import { DEFAULT_QUEUED_WEBHOOK_DELIVERY, QUEUED_WEBHOOK_DELIVERY, type QueuedDeliveryPort } from './queued-delivery.port.js';
import { parseAllowNetworks } from './ssrf-guard.js';
import { WebhookError } from './webhook-error.js';
import { WebhookHttpClient } from './webhook-http-client.js';
import { signingSecretOf, type WebhookTraceContext } from './outgoing-headers.js';
import { AgentTracer } from '../tracing/agent-tracer.js';
import { WebhookSender } from './webhook-sender.js';
import { webhookIdFor } from './webhook-id.js';
import { APP_URL_ENV, isAppRelative, resolveWebhookUrl } from './webhook-url.js';

const DEFAULT_TIMEOUT_SECONDS = 30;

@Injectable()
export class WebhookDeliveryService implements WebhookDeliveryPort, OnModuleInit {
  private readonly logger = new Logger('AgentHooksWebhooks');
  private readonly client: WebhookHttpClient;
  private readonly sender: WebhookSender;
  private payloads: WebhookPayloadBuilder;
  private readonly appUrl: string | undefined;

  constructor(
    @Inject(AGENT_HOOKS_MODULE_OPTIONS) options: AgentHooksModuleOptions,
    @Optional() @Inject(USER_DIRECTORY) private directory?: UserDirectory,
    @Optional() @Inject(QUEUED_WEBHOOK_DELIVERY) private queue?: QueuedDeliveryPort,
    @Optional() private readonly moduleRef?: ModuleRef,
    @Optional() @Inject(DEFAULT_QUEUED_WEBHOOK_DELIVERY) private readonly builtinQueue?: QueuedDeliveryPort,
    /** SPEC O2: the active trace context goes out as `traceparent` with every webhook. */
    @Optional() private readonly tracer?: AgentTracer,
  ) {
    const allowNetworks = options.webhooks?.allowNetworks ?? parseAllowNetworks(process.env);
    this.client = new WebhookHttpClient({ allowNetworks });
    this.sender = new WebhookSender(this.client, signingSecretOf(options));
    this.payloads = new WebhookPayloadBuilder(directory);
    this.appUrl = options.webhooks?.appUrl || undefined;
  }

  /**
   * The host app may provide a `UserDirectory` (B3) or a queue port in any of its modules; without one, the
   * built-in queue port (BullMQ / QStash) is used when it is wired.
   */
  onModuleInit(): void {
    this.directory ??= this.lookup<UserDirectory>(USER_DIRECTORY);
    this.queue ??= this.lookup<QueuedDeliveryPort>(QUEUED_WEBHOOK_DELIVERY) ?? this.builtinQueue;
    if (this.directory) this.payloads = new WebhookPayloadBuilder(this.directory);
  }

  private lookup<T>(token: symbol): T | undefined {
    try {
      return this.moduleRef?.get<T>(token, { strict: false });
    } catch {
      return undefined;
    }
  }

  async notify(request: WebhookRequest): Promise<void> {
    const webhook = this.webhookOf(request);
    const payload = await this.payloads.build(request.event, { id: request.hook.id, point: request.point, webhook }, {
      control: false,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (payload === undefined) throw new WebhookError('cancelled', `delivery of hook ${request.hook.id} was cancelled`);
    const body = JSON.stringify(payload);
    const webhookId = webhookIdFor(request.hook.id, request.point, request.event);
    const url = this.targetUrl(request, webhook);
    const delivery = webhook.delivery ?? 'fetch';
    const traceContext = this.tracer?.current();
    if (delivery !== 'fetch') {
      try {
        if (!this.queue) throw new WebhookError('configuration', `no ${delivery} delivery is configured in this process`);
        await this.queue.enqueue({
          kind: delivery,
          webhookId,
          hookId: request.hook.id,
          point: request.point,
          source: request.hook.source,
          ...(request.operationId !== undefined ? { operationId: request.operationId } : {}),
          ...toolCallOf(request),
          url,
          headers: webhook.headers ?? {},
          allowedEnvVars: webhook.allowedEnvVars ?? [],
          timeoutSeconds: webhook.timeout ?? DEFAULT_TIMEOUT_SECONDS,
          body,
          ...(traceContext ? { traceContext } : {}),
        });
        return;
      } catch (error) {
        // D3: `fallback: 'none'` never posts directly (the receiver verifies the queue's signature).
        if (webhook.fallback === 'none') throw error;
        this.logger.warn(`${delivery} delivery of hook ${request.hook.id} at ${request.point} failed (${errorCode(error, 'queue_unavailable')}); posting directly`);
      }
    }
    await this.send(request, webhook, url, body, webhookId, false, traceContext);
  }

  async control(request: WebhookRequest): Promise<unknown> {
    const webhook = this.webhookOf(request);
    const payload = await this.payloads.build(request.event, { id: request.hook.id, point: request.point, webhook }, {
      control: true,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (payload === undefined) throw new WebhookError('cancelled', `control hook ${request.hook.id} was cancelled`);
    const text = await this.send(request, webhook, this.targetUrl(request, webhook), JSON.stringify(payload), `msg_${randomUUID()}`, true, this.tracer?.current());
    if (text === undefined || text.trim().length === 0) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined; // invalid JSON is a notification (W11)
    }
  }

  /** Closes the HTTP client (undici Agent). Called by the `ShutdownCoordinator` after the last step and `on_engine_stop` (G4). */
  async close(): Promise<void> {
    await this.client.close();
  }

  private async send(
    request: WebhookRequest,
    webhook: AgentHookWebhook,
    url: string,
    body: string,
    webhookId: string,
    expectBody: boolean,
    traceContext: WebhookTraceContext | undefined,
  ): Promise<string | undefined> {
    // Resolved on every send so rotated secrets are picked up; errors name the variable, never a value (W6).
    const response = await this.sender.post(
      { url, headers: webhook.headers ?? {}, allowedEnvVars: webhook.allowedEnvVars ?? [], timeoutSeconds: webhook.timeout ?? DEFAULT_TIMEOUT_SECONDS, body, webhookId, ...(traceContext ? { traceContext } : {}) },
      { expectBody, ...(request.signal ? { signal: request.signal } : {}) },
    );
    return response.body;
  }

  /**
   * W4: an app-relative URL is resolved now, against this process's app URL (the option, else the
   * environment); absolute URLs were normalized at registration. The message never quotes the URL.
   */
  private targetUrl(request: WebhookRequest, webhook: AgentHookWebhook): string {
    if (!isAppRelative(webhook.url)) return webhook.url;
    const resolution = resolveWebhookUrl(webhook.url, this.appUrl ?? process.env[APP_URL_ENV]);
    if ('problem' in resolution) throw new WebhookError('configuration', `webhook url of hook ${request.hook.id} ${resolution.problem}`);
    return resolution.url;
  }

  private webhookOf(request: WebhookRequest): AgentHookWebhook {
    const webhook = request.hook.webhook;
    if (!webhook) throw new WebhookError('configuration', `hook ${request.hook.id} has no webhook`);
    return webhook;
  }
}

/** F1: a tool point's event names its call (T1); the queued job keeps the id for its timeline row. */
function toolCallOf(request: WebhookRequest): { toolCallId?: string } {
  if (!HOOK_POINTS[request.point].toolEvent) return {};
  const toolCallId = (request.event as { toolCallId?: unknown }).toolCallId;
  return typeof toolCallId === 'string' ? { toolCallId } : {};
}
