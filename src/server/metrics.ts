// Prometheus metrics (issue 17 §5) on prom-client, text format. Off unless `metrics` is configured:
// then nothing here is loaded and no hook is installed. On, the cost per request is one 'close'
// listener (observe) and, per answering step, one property write (tag); label children are made
// once here, so the request path only looks them up.
import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import { compileIpRanges, parseIp } from '../http/ip.js';
import type { Final, Step, StepContext, TunnelHandler } from './context.js';
import { ERRORS, sendError } from './errors.js';
import { cacheStatusOf, quietAccessLog } from './log.js';

export interface MetricsOptions {
  path: string;
  /** Client addresses that may read the metrics (addresses, CIDRs, keywords); others get 403. */
  allow: string[];
}

/** Which part of the server answered a request. */
export const ROUTE_KINDS = ['static', 'proxy', 'jsonp', 'ws', 'route', 'other'] as const;
export type RouteKind = (typeof ROUTE_KINDS)[number];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
export const CACHE_OUTCOMES = ['hit', 'stale', 'miss', 'revalidate', 'bypass'] as const;
export type CacheOutcome = (typeof CACHE_OUTCOMES)[number];

/** The class index of a status (1xx -> 0 ... 5xx -> 4); out-of-range statuses count as 5xx. */
export function statusClassIndex(status: number): number {
  const c = Math.floor(status / 100) - 1;
  return c >= 0 && c <= 4 ? c : 4;
}

/**
 * The outcome of a proxy cache answer from its Cache-Status parameters (RFC 9211 §2): `hit`, a hit
 * with a `detail` (served stale, RFC 5861), `fwd=stale` / `fwd=request` (revalidated upstream),
 * `fwd=bypass` / `fwd=method` (not cacheable), any other `fwd` (a miss).
 */
export function cacheOutcome(status: string): CacheOutcome {
  // `gatehouse; hit; ttl=600` or just the parameters: the cache's name is not a parameter.
  let hit = false;
  let detail = false;
  let fwd: string | undefined;
  for (const part of status.split(';')) {
    const t = part.trim();
    if (t === 'hit') hit = true;
    else if (t.startsWith('detail=')) detail = true;
    else if (t.startsWith('fwd=')) fwd = t.slice(4);
  }
  if (hit) return detail ? 'stale' : 'hit';
  if (fwd === 'stale' || fwd === 'request') return 'revalidate';
  if (fwd === 'bypass' || fwd === 'method') return 'bypass';
  return 'miss';
}

const KIND = Symbol('gatehouse.metrics.kind');
type Tagged = ServerResponse & { [KIND]?: RouteKind };
/** Every value has labels, even none: prom-client's cluster aggregation hashes them. */
type MetricValue = { metricName?: string; labels: Record<string, string>; value: number };

/** Request duration buckets (seconds), as label values and as numbers. */
const DURATION_BUCKETS_SEC = [
  '0.001',
  '0.005',
  '0.01',
  '0.025',
  '0.05',
  '0.1',
  '0.25',
  '0.5',
  '1',
  '2.5',
  '5',
  '10',
];
const DURATION_BUCKETS_SEC_N = DURATION_BUCKETS_SEC.map(Number);

export interface Metrics {
  /** The /metrics endpoint (first in the gate, beside health). */
  readonly step: Step;
  /** Counts the request once it closes (installed beside the access log). */
  readonly observe: (req: IncomingMessage, res: ServerResponse) => void;
  /** A step that records its kind before it runs (a later step that answers overwrites it). */
  tag(kind: RouteKind, step: Step): Step;
  tagFinal(kind: RouteKind, final: Final): Final;
  tagTunnel(kind: RouteKind, handle: TunnelHandler): TunnelHandler;
  readonly registry: Registry;
}

export interface MetricsDeps {
  /** Proxy routes with a cache, for the `store` label: prefix and store kind. */
  cacheRoutes: readonly { prefix: string; store: string }[];
  /** Open WebSocket connections on our endpoints, read at scrape time. */
  openWebSockets: () => number;
}

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
  // The request path only adds to these arrays; prom-client reads them at scrape time (collectors),
  // which keeps a request's cost to a few array writes (prom-client's labelled inc() hashes labels).
  const KINDS = ROUTE_KINDS.length;
  const CLASSES = STATUS_CLASSES.length;
  const BUCKETS = DURATION_BUCKETS_SEC.length;
  const requests = new Float64Array(KINDS * CLASSES);
  const bytes = new Float64Array(KINDS);
  // Per kind: BUCKETS + 1 slots (the last is +Inf), not cumulative; cumulated at scrape time.
  const durationCounts = new Float64Array(KINDS * (BUCKETS + 1));
  const durationSum = new Float64Array(KINDS);
  const stores = [...new Set(['memory', ...deps.cacheRoutes.map((r) => r.store)])];
  const cache = new Float64Array(stores.length * CACHE_OUTCOMES.length);
  let rateLimited = 0;
  let upstream502 = 0;
  let upstream504 = 0;

  const collector = (
    name: string,
    help: string,
    type: 'counter' | 'gauge' | 'histogram',
    values: () => MetricValue[],
  ) =>
    registry.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      get: () => ({ name, help, type, aggregator: 'sum', values: values() }),
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  collector(
    'gatehouse_requests_total',
    'Requests answered, by status class and the kind of route that answered.',
    'counter',
    () =>
      ROUTE_KINDS.flatMap((kind, k) =>
        STATUS_CLASSES.map((c, i) => ({
          labels: { class: c, kind },
          value: requests[k * CLASSES + i]!,
        })).filter((v) => v.value > 0),
      ),
  );
  collector(
    'gatehouse_request_duration_seconds',
    'Time from the request head to the end of the response, by route kind.',
    'histogram',
    () =>
      ROUTE_KINDS.flatMap((kind, k) => {
        let total = 0;
        for (let b = 0; b <= BUCKETS; b++) total += durationCounts[k * (BUCKETS + 1) + b]!;
        if (total === 0) return [];
        const out: MetricValue[] = [];
        let cumulative = 0;
        for (let b = 0; b < BUCKETS; b++) {
          cumulative += durationCounts[k * (BUCKETS + 1) + b]!;
          out.push({
            metricName: 'gatehouse_request_duration_seconds_bucket',
            labels: { le: DURATION_BUCKETS_SEC[b]!, kind },
            value: cumulative,
          });
        }
        out.push({
          metricName: 'gatehouse_request_duration_seconds_bucket',
          labels: { le: '+Inf', kind },
          value: total,
        });
        out.push({
          metricName: 'gatehouse_request_duration_seconds_sum',
          labels: { kind },
          value: durationSum[k]!,
        });
        out.push({ metricName: 'gatehouse_request_duration_seconds_count', labels: { kind }, value: total });
        return out;
      }),
  );
  collector(
    'gatehouse_response_bytes_total',
    'Bytes sent on the connection for responses (head and body), by route kind.',
    'counter',
    () => ROUTE_KINDS.map((kind, k) => ({ labels: { kind }, value: bytes[k]! })).filter((v) => v.value > 0),
  );
  collector(
    'gatehouse_cache_requests_total',
    'Proxy cache answers by store and outcome (from Cache-Status, RFC 9211).',
    'counter',
    () =>
      stores.flatMap((store, si) =>
        CACHE_OUTCOMES.map((outcome, oi) => ({
          labels: { store, outcome },
          value: cache[si * CACHE_OUTCOMES.length + oi]!,
        })).filter((v) => v.value > 0),
      ),
  );
  collector(
    'gatehouse_upstream_failures_total',
    'Proxied requests answered 502 (upstream unreachable or broken) or 504 (upstream timeout).',
    'counter',
    () =>
      [
        { labels: { status: '502' }, value: upstream502 },
        { labels: { status: '504' }, value: upstream504 },
      ].filter((v) => v.value > 0),
  );
  collector(
    'gatehouse_rate_limit_rejections_total',
    'Requests refused with 429 Too Many Requests.',
    'counter',
    () => [{ labels: {}, value: rateLimited }],
  );
  collector(
    'gatehouse_websockets_open',
    'Open WebSocket connections on Gatehouse endpoints.',
    'gauge',
    () => [{ labels: {}, value: deps.openWebSockets() }],
  );

  const kindIndex = new Map<RouteKind, number>(ROUTE_KINDS.map((k, i) => [k, i]));
  const otherIndex = kindIndex.get('other')!;
  const proxyIndex = kindIndex.get('proxy')!;
  const routes = [...deps.cacheRoutes].sort((a, b) => b.prefix.length - a.prefix.length);
  const storeIndex = (url: string): number =>
    stores.indexOf(routes.find((r) => url.startsWith(r.prefix))?.store ?? routes[0]?.store ?? 'memory');

  const count = (req: IncomingMessage, res: ServerResponse, startMs: number, sentBefore: number): void => {
    const status = res.writableFinished ? res.statusCode : 499;
    const kind = (res as Tagged)[KIND];
    const k = kind === undefined ? otherIndex : kindIndex.get(kind)!;
    requests[k * CLASSES + statusClassIndex(status)]!++;
    const sec = (performance.now() - startMs) / 1000;
    let b = 0;
    while (b < BUCKETS && sec > DURATION_BUCKETS_SEC_N[b]!) b++;
    durationCounts[k * (BUCKETS + 1) + b]!++;
    durationSum[k]! += sec;
    bytes[k]! += Math.max(0, req.socket.bytesWritten - sentBefore);
    if (status === 429) rateLimited++;
    if (k === proxyIndex) {
      if (status === 502) upstream502++;
      else if (status === 504) upstream504++;
      const cs = cacheStatusOf(res);
      if (cs !== undefined)
        cache[
          storeIndex(req.url ?? '/') * CACHE_OUTCOMES.length + CACHE_OUTCOMES.indexOf(cacheOutcome(cs))
        ]!++;
    }
  };
  // Like the access log: one closure and one 'close' listener, nothing stored on the response.
  const observe = (req: IncomingMessage, res: ServerResponse): void => {
    const startMs = performance.now();
    const sentBefore = req.socket.bytesWritten;
    // 'close' fires once: on() saves once()'s wrapper.
    res.on('close', () => count(req, res, startMs, sentBefore));
  };

  const allowed = compileIpRanges(o.allow);
  const step: Step = (req, res) => {
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

  return {
    step,
    observe,
    registry,
    tag: (kind, s) => (req, res) => {
      (res as Tagged)[KIND] = kind;
      return s(req, res);
    },
    tagFinal: (kind, f) => (req, res) => {
      (res as Tagged)[KIND] = kind;
      f(req, res);
    },
    tagTunnel: (kind, h) => (req, res, tunnel) => {
      (res as Tagged)[KIND] = kind;
      return h(req, res, tunnel);
    },
  };
}
