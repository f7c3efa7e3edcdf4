import { describe, expect, it } from 'vitest';
import { GatewayMetrics, SERIES_MAX } from '../src/metrics.js';

describe('GatewayMetrics', () => {
  it('counts by operation and status with cumulative buckets', () => {
    const metrics = new GatewayMetrics();
    for (const ms of [0.1, 3, 3, 700, 30_000]) {
      metrics.started();
      metrics.observe('send', 201, ms);
    }
    metrics.started();
    metrics.observe('send', 413, 1);
    const text = metrics.render();
    expect(text).toContain('mq_gateway_requests_total{operation="send",status="201"} 5');
    expect(text).toContain('mq_gateway_requests_total{operation="send",status="413"} 1');
    expect(text).toContain('mq_gateway_request_duration_seconds_bucket{operation="send",status="201",le="0.0005"} 1');
    expect(text).toContain('mq_gateway_request_duration_seconds_bucket{operation="send",status="201",le="0.005"} 3');
    expect(text).toContain('mq_gateway_request_duration_seconds_bucket{operation="send",status="201",le="1"} 4');
    expect(text).toContain('mq_gateway_request_duration_seconds_bucket{operation="send",status="201",le="25"} 4');
    expect(text).toContain('mq_gateway_request_duration_seconds_bucket{operation="send",status="201",le="+Inf"} 5');
    expect(text).toContain('mq_gateway_request_duration_seconds_sum{operation="send",status="201"} 30.7061');
    expect(text).toContain('mq_gateway_requests_in_flight 0');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('tracks requests in flight', () => {
    const metrics = new GatewayMetrics();
    metrics.started();
    metrics.started();
    metrics.observe('ack', 204, 1);
    expect(metrics.render()).toContain('mq_gateway_requests_in_flight 1');
  });

  it('bounds the number of series', () => {
    const metrics = new GatewayMetrics();
    for (let i = 0; i < SERIES_MAX + 10; i += 1) {
      metrics.started();
      metrics.observe(`op${i}`, 200, 1);
    }
    const text = metrics.render();
    expect(text).toContain('mq_gateway_requests_total{operation="other",status="200"} 10');
    expect(text.split('\n').filter((line) => line.startsWith('mq_gateway_requests_total')).length).toBe(SERIES_MAX + 1);
  });
});
