// Prometheus metrics on prom-client, text format. Off unless `metrics` is configured:
// then nothing here is loaded and no hook is installed. On, the cost per request is one 'close'
// listener (observe) and, per answering step, one property write (tag); the numbers are plain
// arrays (metrics-counts.ts) that prom-client reads when scraped.
// The endpoint and the tags use the exchange's request and response sink; observe() counts through the
// access log's accounting (ops/log.ts), which reads the Node transport's socket: its Node types stay.
import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import { compileIpRanges, parseIp } from '../../http/ip.js';
import type { Final, Step, TunnelBase, TunnelHandler } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import type { StepContext } from '../node/types.js';
import { quietAccessLog, whenAnswered } from './log.js';
import { type CountsDeps, createRequestCounts, KIND, type RouteKind, type Tagged } from './metrics-counts.js';

export interface MetricsOptions {
  path: string;
  /** Client addresses that may read the metrics (addresses, CIDRs, keywords); others get 403. */
  allow: string[];
}

export type { CacheOutcome, RouteKind } from './metrics-counts.js';
export { CACHE_OUTCOMES, cacheOutcome, ROUTE_KINDS, statusClassIndex } from './metrics-counts.js';

export interface Metrics {
  /** The /metrics endpoint (first in the gate, beside health). */
  readonly step: Step;
  /** Counts the request once it closes (installed beside the access log). */
  readonly observe: (req: IncomingMessage, res: ServerResponse) => void;
  /** A step that records its kind before it runs (a later step that answers overwrites it). */
  tag<Q extends ExchangeRequest, S extends ResponseSink>(kind: RouteKind, step: Step<Q, S>): Step<Q, S>;
  tagFinal<Q extends ExchangeRequest, S extends ResponseSink>(
    kind: RouteKind,
    final: Final<Q, S>,
  ): Final<Q, S>;
  tagTunnel<Q extends ExchangeRequest, S extends ResponseSink, T extends TunnelBase>(
    kind: RouteKind,
    handle: TunnelHandler<Q, S, T>,
  ): TunnelHandler<Q, S, T>;
  readonly registry: Registry;
}

export type MetricsDeps = CountsDeps;

type PromClient = typeof import('prom-client');
const loadPromClient = (): PromClient => createRequire(import.meta.url)('prom-client') as PromClient;

/** Asks the cluster primary for every worker's metrics, aggregated (metrics-cluster.ts). */
function askPrimary(timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const id = Math.floor(Math.random() * 2 ** 31);
    const onMessage = (m: { gatehouse?: string; id?: number; text?: string; error?: string }) => {
      if (m?.gatehouse !== 'metrics-res' || m.id !== id) return;
      done();
      if (m.text !== undefined) resolve(m.text);
      else reject(new Error(m.error ?? 'no metrics'));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error('the primary did not answer'));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
    };
    process.on('message', onMessage);
    process.send?.({ gatehouse: 'metrics-req', id });
  });
}

/** GET/HEAD `metrics.path`: the text format to allowed client addresses, 403 to others. */
function metricsEndpoint(o: MetricsOptions, ctx: StepContext, registry: Registry, inCluster: boolean): Step {
  const allowed = compileIpRanges(o.allow);
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url!;
    const q = url.indexOf('?');
    if ((q < 0 ? url : url.slice(0, q)) !== o.path) return false;
    // The address trustProxy yields: a forwarding header counts only from a trusted peer.
    const ip = parseIp(ctx.clientAddress(req));
    if (ip === null || !allowed(ip)) {
      sendError(req, res, ERRORS.forbidden, 'The metrics are not served to this address.');
      return true;
    }
    quietAccessLog(res);
    return (inCluster ? askPrimary(5000) : registry.metrics()).then(
      (text) => {
        res.writeHead(200, {
          'Content-Type': registry.contentType,
          'Cache-Control': 'no-store',
          'Content-Length': Buffer.byteLength(text),
        });
        res.end(req.method === 'HEAD' ? undefined : text);
        return true;
      },
      () => {
        sendError(req, res, ERRORS.serviceUnavailable, 'The metrics could not be collected.');
        return true;
      },
    );
  };
}

/** Undefined when `metrics` is not configured: prom-client is not even loaded. */
export function createMetrics(
  o: MetricsOptions | undefined,
  ctx: StepContext,
  deps: MetricsDeps,
): Metrics | undefined {
  if (o === undefined) return undefined;
  const prom = loadPromClient();
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry });
  const inCluster = cluster.isWorker && typeof process.send === 'function';
  // With --workers, the primary's AggregatorRegistry collects this registry from each worker.
  // (Constructing one installs prom-client's worker-side listener.)
  if (inCluster) {
    prom.AggregatorRegistry.setRegistries([registry]);
    void new prom.AggregatorRegistry();
  }
  const counts = createRequestCounts({ ...deps, memory: ctx.memory });
  for (const c of counts.collectors) {
    const { name, help, type, aggregator } = c;
    registry.registerMetric({
      name,
      help,
      type,
      aggregator,
      get: async () => ({ name, help, type, aggregator, values: await c.values() }),
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  }
  // Like the access log (log.ts whenAnswered): one 'close' listener, nothing stored on the response.
  const observe = (req: IncomingMessage, res: ServerResponse): void => {
    const startMs = performance.now();
    const sentBefore = req.socket.bytesWritten;
    whenAnswered(req, res, () => counts.count(req, res, startMs, sentBefore));
  };

  const step = metricsEndpoint(o, ctx, registry, inCluster);

  return {
    step,
    observe,
    registry,
    tag: (kind, s) => (req, res, cx) => {
      (res as Tagged)[KIND] = kind;
      return s(req, res, cx);
    },
    tagFinal: (kind, f) => (req, res, cx) => {
      (res as Tagged)[KIND] = kind;
      f(req, res, cx);
    },
    tagTunnel: (kind, h) => (req, res, tunnel, cx) => {
      (res as Tagged)[KIND] = kind;
      return h(req, res, tunnel, cx);
    },
  };
}

/** What the metrics feature is made from: the `metrics` section and where its figures come from. */
export interface MetricsFeatureOptions {
  readonly metrics: MetricsOptions | undefined;
  readonly sources: MetricsDeps;
}

/** The metrics feature: the /metrics gate step, and the counters the composition root tags with. */
export interface MetricsFeature extends Feature {
  readonly metrics: Metrics;
}

/** /metrics as a feature (core/feature.ts): a gate step beside health. Off without `metrics`. */
export function create(options: MetricsFeatureOptions, kernel: StepContext): MetricsFeature | undefined {
  const metrics = createMetrics(options.metrics, kernel, options.sources);
  return metrics && { gate: metrics.step, metrics };
}
