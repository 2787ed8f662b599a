import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { METRICS_REGISTRY } from './metrics-registry.js';

/**
 * `GET /metrics` in the Prometheus text format. Unauthenticated like /healthz: it holds counts by closed
 * label sets only, nothing of any caller's operations.
 */
@ApiTags('ops')
@Controller()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get('metrics')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  @ApiProduces(Registry.PROMETHEUS_CONTENT_TYPE)
  @ApiOkResponse({ description: 'Prometheus metrics: hook invocations, hook latency, webhook errors, operations by status, process metrics.' })
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
