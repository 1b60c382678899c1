// Metrics with --workers: the primary aggregates every worker's registry through
// prom-client's AggregatorRegistry (counters and histograms summed, per-process gauges kept by
// their own aggregator). A worker that serves /metrics asks the primary over the IPC channel.
import { createRequire } from 'node:module';
import type { AggregatorRegistry as Aggregator } from 'prom-client';

type PromClient = typeof import('prom-client');
// prom-client is loaded only when metrics are on.
const loadPromClient = (): PromClient => createRequire(import.meta.url)('prom-client') as PromClient;

/** The primary's answer to a worker's `metrics-req`: the aggregated text of every worker. */
export async function primaryMetrics(): Promise<() => Promise<string>> {
  const { AggregatorRegistry } = loadPromClient();
  const aggregator: Aggregator<'text/plain; version=0.0.4; charset=utf-8'> = new AggregatorRegistry();
  return () => aggregator.clusterMetrics();
}
