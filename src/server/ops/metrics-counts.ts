// The numbers behind /metrics (metrics.ts): the request path only adds to typed arrays; prom-client
// reads them through collectors at scrape time, so a request costs a few array writes (prom-client's
// labelled inc() would hash the labels on every call).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MemoryPressure } from '../core/context.js';
import type { ResponseSink } from '../core/exchange.js';
import { answeredBytes, answeredStatus, cacheStatusOf, droppedLogWrites } from './log.js';

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

/** The route kind a tagged step recorded on the response (metrics.ts tag). */
export const KIND = Symbol('gatehouse.metrics.kind');
export type Tagged = ResponseSink & { [KIND]?: RouteKind };
/** Every value has labels, even none: prom-client's cluster aggregation hashes them. */
export type MetricValue = { metricName?: string; labels: Record<string, string>; value: number };

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

/** A metric read at scrape time (registered as a prom-client metric object). */
export interface Collector {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** How the --workers primary combines the workers' values (prom-client's aggregators). */
  aggregator: 'sum' | 'max' | 'min';
  values(): MetricValue[] | Promise<MetricValue[]>;
}

export interface RequestCounts {
  /** Counts a finished (or abandoned: 499) request. */
  count(req: IncomingMessage, res: ServerResponse, startMs: number, sentBefore: number): void;
  readonly collectors: readonly Collector[];
}

/**
 * What the proxy reports at scrape time, as the metrics read it (the proxy's stats(): proxy/handler.ts
 * ProxyStats has this shape). Declared here so the metrics import no feature.
 */
export interface ProxyFigures {
  /** Per cached route: bytes its store accounts to entries, entries it could not serve. */
  readonly caches: readonly { route: string; store: string; bytes: number; invalid: number }[];
  /** Per upstream of each route: balanced to (not cooling down), requests in flight, failures so far. */
  readonly upstreams: readonly {
    route: string;
    upstream: string;
    up: boolean;
    inFlight: number;
    errors: number;
  }[];
}

/** The HTTP/2 session guard's counts as the metrics read them (tls/h2-sessions.ts H2Stats has this shape). */
export interface Http2Figures {
  readonly clientResets: number;
  readonly refusedHeaderBlocks: number;
  readonly sendTimeouts: number;
  readonly refusedConnections: number;
  /** Sessions the guard closed, by reason (the `reason` label), in the guard's order. */
  readonly closed: Readonly<Record<string, number>>;
}

export interface CountsDeps {
  /** Proxy routes with a cache, for the `store` label: prefix and store kind. */
  cacheRoutes: readonly { prefix: string; store: string }[];
  /** Open WebSocket connections on our endpoints, read at scrape time. */
  openWebSockets: () => number;
  /** The proxy's stores and upstreams, read at scrape time. */
  proxyStats: () => Promise<ProxyFigures>;
  /** The HTTP/2 session guard's counts (tls/h2-sessions.ts); undefined without HTTP/2. */
  http2Stats?: (() => Http2Figures | undefined) | undefined;
  /** The memory pressure watch's last decision (ops/pressure.ts); undefined: not watched. */
  memory?: (() => MemoryPressure) | undefined;
}

const PRESSURE_LEVELS = { none: 0, shed: 1, critical: 2 } as const;

const KINDS = ROUTE_KINDS.length;
const CLASSES = STATUS_CLASSES.length;
const BUCKETS = DURATION_BUCKETS_SEC.length;

/** The counts; Float64Array stays exact for integers up to 2^53. */
interface Arrays {
  /** [kind * CLASSES + class] */
  requests: Float64Array;
  /** [kind] */
  bytes: Float64Array;
  /** [kind * (BUCKETS + 1) + bucket]: per bucket, not cumulative; the last slot is +Inf. */
  durationCounts: Float64Array;
  durationSum: Float64Array;
  stores: readonly string[];
  /** [store * CACHE_OUTCOMES.length + outcome] */
  cache: Float64Array;
  /** [rate-limit rejections, upstream 502s, upstream 504s] */
  scalars: Float64Array;
}

/** Adds a collector (aggregated by sum unless said). */
type AddCollector = (
  name: string,
  help: string,
  type: Collector['type'],
  values: Collector['values'],
  aggregator?: Collector['aggregator'],
) => void;

/** The metrics as prom-client reads them, from the arrays (histogram buckets cumulated here). */
function collectorsOf(
  a: Arrays,
  deps: Pick<CountsDeps, 'openWebSockets' | 'proxyStats' | 'http2Stats' | 'memory'>,
): Collector[] {
  const collectors: Collector[] = [];
  const collector: AddCollector = (name, help, type, values, aggregator = 'sum') => {
    collectors.push({ name, help, type, aggregator, values });
  };
  collector(
    'gatehouse_requests_total',
    'Requests answered, by status class and the kind of route that answered.',
    'counter',
    () =>
      ROUTE_KINDS.flatMap((kind, k) =>
        STATUS_CLASSES.map((c, i) => ({
          labels: { class: c, kind },
          value: a.requests[k * CLASSES + i]!,
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
        for (let b = 0; b <= BUCKETS; b++) total += a.durationCounts[k * (BUCKETS + 1) + b]!;
        if (total === 0) return [];
        const out: MetricValue[] = [];
        let cumulative = 0;
        for (let b = 0; b < BUCKETS; b++) {
          cumulative += a.durationCounts[k * (BUCKETS + 1) + b]!;
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
          value: a.durationSum[k]!,
        });
        out.push({ metricName: 'gatehouse_request_duration_seconds_count', labels: { kind }, value: total });
        return out;
      }),
  );
  collector(
    'gatehouse_response_bytes_total',
    'Bytes sent on the connection for responses (head and body), by route kind.',
    'counter',
    () => ROUTE_KINDS.map((kind, k) => ({ labels: { kind }, value: a.bytes[k]! })).filter((v) => v.value > 0),
  );
  collector(
    'gatehouse_cache_requests_total',
    'Proxy cache answers by store and outcome (from Cache-Status, RFC 9211).',
    'counter',
    () =>
      a.stores.flatMap((store, si) =>
        CACHE_OUTCOMES.map((outcome, oi) => ({
          labels: { store, outcome },
          value: a.cache[si * CACHE_OUTCOMES.length + oi]!,
        })).filter((v) => v.value > 0),
      ),
  );
  collector(
    'gatehouse_upstream_failures_total',
    'Proxied requests answered 502 (upstream unreachable or broken) or 504 (upstream timeout).',
    'counter',
    () =>
      [
        { labels: { status: '502' }, value: a.scalars[1]! },
        { labels: { status: '504' }, value: a.scalars[2]! },
      ].filter((v) => v.value > 0),
  );
  collector(
    'gatehouse_rate_limit_rejections_total',
    'Requests refused with 429 Too Many Requests.',
    'counter',
    () => [{ labels: {}, value: a.scalars[0]! }],
  );
  collector(
    'gatehouse_websockets_open',
    'Open WebSocket connections on Gatehouse endpoints.',
    'gauge',
    () => [{ labels: {}, value: deps.openWebSockets() }],
  );
  collector(
    'gatehouse_log_dropped_writes_total',
    'Log writes dropped because the log could not be written (a closed stdout: EPIPE).',
    'counter',
    () => [{ labels: {}, value: droppedLogWrites() }],
  );
  proxyCollectors(collector, deps.proxyStats);
  if (deps.http2Stats !== undefined) http2Collectors(collector, deps.http2Stats);
  const { memory } = deps;
  if (memory !== undefined) {
    collector(
      'gatehouse_memory_pressure',
      'Memory pressure (docs/deploy.md, "Memory"): 0 none, 1 the caches shed, 2 at the limit (readiness 503).',
      'gauge',
      () => [{ labels: {}, value: PRESSURE_LEVELS[memory().level] }],
      'max',
    );
    collector(
      'gatehouse_memory_shed_bytes_total',
      'Bytes the caches dropped under memory pressure, least recently used first.',
      'counter',
      () => [{ labels: {}, value: memory().shedBytes }],
    );
  }
  return collectors;
}

/** The HTTP/2 session guard: client resets, refused header blocks, stalled streams, GOAWAYs, bans. */
function http2Collectors(collector: AddCollector, stats: () => Http2Figures | undefined): void {
  const one = (value: (s: Http2Figures) => number) => (): MetricValue[] => {
    const s = stats();
    return s === undefined ? [] : [{ labels: {}, value: value(s) }];
  };
  collector(
    'gatehouse_http2_client_resets_total',
    'HTTP/2 streams the client reset (RST_STREAM) before their response ended.',
    'counter',
    one((s) => s.clientResets),
  );
  collector(
    'gatehouse_http2_refused_header_blocks_total',
    'HTTP/2 header blocks refused (over limits.maxHeaderBytes or too many fields, as an HPACK bomb).',
    'counter',
    one((s) => s.refusedHeaderBlocks),
  );
  collector(
    'gatehouse_http2_send_timeouts_total',
    'HTTP/2 streams reset because the client took none of their data for limits.sendTimeoutMs.',
    'counter',
    one((s) => s.sendTimeouts),
  );
  collector(
    'gatehouse_http2_refused_connections_total',
    'Connections refused at accept because their address was past limits.http2.maxResetsPerWindow.',
    'counter',
    one((s) => s.refusedConnections),
  );
  collector(
    'gatehouse_http2_sessions_closed_total',
    'HTTP/2 sessions closed by Gatehouse: idle, no_request (headersTimeoutMs), resets (GOAWAY ' +
      'ENHANCE_YOUR_CALM past the reset budget), header_blocks (refused header blocks).',
    'counter',
    () => {
      const s = stats();
      return s === undefined
        ? []
        : Object.entries(s.closed).map(([reason, value]) => ({ labels: { reason }, value }));
    },
  );
}

/** The cache stores' sizes and the upstreams' health, read from the proxy when scraped. */
function proxyCollectors(collector: AddCollector, stats: () => Promise<ProxyFigures>): void {
  // One read per scrape: prom-client collects every metric at once (the stores' sizes may cost a Redis GET).
  let pending: Promise<ProxyFigures> | undefined;
  const read = () =>
    (pending ??= stats().finally(() => {
      pending = undefined;
    }));
  // The Redis store's total is shared (its own metric, no store label); memory and disk are this process's.
  const caches = async (shared: boolean): Promise<MetricValue[]> =>
    (await read()).caches
      .filter(({ store }) => (store === 'redis') === shared)
      .map(({ route, store, bytes }): MetricValue => {
        const labels: Record<string, string> = shared ? { route } : { route, store };
        return { labels, value: bytes };
      });
  collector(
    'gatehouse_cache_stored_bytes',
    "Bytes the proxy cache's process-local stores (memory, disk) hold: bodies and metadata, by route.",
    'gauge',
    () => caches(false),
  );
  // Every process sees the one shared total: the primary keeps the largest report, not their sum.
  collector(
    'gatehouse_cache_shared_stored_bytes',
    'Bytes the shared Redis cache store holds for a route, as this process last read them.',
    'gauge',
    () => caches(true),
    'max',
  );
  collector(
    'gatehouse_cache_invalid_entries_total',
    'Entries a cache store read back (Redis, disk) or was given that could not be served (a status ' +
      'outside 200-599, a field that is not a token or field value, a body over maxEntryBytes): each a ' +
      'miss, dropped, with a warning naming the key.',
    'counter',
    async () =>
      (await read()).caches.map(({ route, store, invalid }) => ({
        labels: { route, store },
        value: invalid,
      })),
  );
  const upstreams = (value: (u: ProxyFigures['upstreams'][number]) => number) => async () =>
    (await read()).upstreams.map((u) => ({
      labels: { route: u.route, upstream: u.upstream },
      value: value(u),
    }));
  // A process that took an upstream out reports 0: the primary keeps the lowest.
  collector(
    'gatehouse_upstream_up',
    'Whether the upstream takes requests (1), or is out after failures or a failed health check (0).',
    'gauge',
    upstreams((u) => (u.up ? 1 : 0)),
    'min',
  );
  collector(
    'gatehouse_upstream_in_flight',
    'Requests sent to the upstream and not finished.',
    'gauge',
    upstreams((u) => u.inFlight),
  );
  collector(
    'gatehouse_upstream_errors_total',
    'Connection failures, timeouts and failed health checks of the upstream.',
    'counter',
    upstreams((u) => u.errors),
  );
}

export function createRequestCounts(deps: CountsDeps): RequestCounts {
  const stores = [...new Set(['memory', ...deps.cacheRoutes.map((r) => r.store)])];
  const arrays: Arrays = {
    requests: new Float64Array(KINDS * CLASSES),
    bytes: new Float64Array(KINDS),
    durationCounts: new Float64Array(KINDS * (BUCKETS + 1)),
    durationSum: new Float64Array(KINDS),
    stores,
    cache: new Float64Array(stores.length * CACHE_OUTCOMES.length),
    scalars: new Float64Array(3),
  };
  const { requests, bytes, durationCounts, durationSum, cache, scalars } = arrays;
  const collectors = collectorsOf(arrays, deps);

  const kindIndex = new Map<RouteKind, number>(ROUTE_KINDS.map((k, i) => [k, i]));
  const otherIndex = kindIndex.get('other')!;
  const proxyIndex = kindIndex.get('proxy')!;
  const routes = [...deps.cacheRoutes].sort((a, b) => b.prefix.length - a.prefix.length);
  const storeIndex = (url: string): number =>
    stores.indexOf(routes.find((r) => url.startsWith(r.prefix))?.store ?? routes[0]?.store ?? 'memory');

  const count = (req: IncomingMessage, res: ServerResponse, startMs: number, sentBefore: number): void => {
    const status = answeredStatus(res);
    const kind = (res as Tagged)[KIND];
    const k = kind === undefined ? otherIndex : kindIndex.get(kind)!;
    requests[k * CLASSES + statusClassIndex(status)]!++;
    const sec = (performance.now() - startMs) / 1000;
    let b = 0;
    while (b < BUCKETS && sec > DURATION_BUCKETS_SEC_N[b]!) b++;
    durationCounts[k * (BUCKETS + 1) + b]!++;
    durationSum[k]! += sec;
    bytes[k]! += answeredBytes(req, res, sentBefore);
    if (status === 429) scalars[0]!++;
    if (k === proxyIndex) {
      if (status === 502) scalars[1]!++;
      else if (status === 504) scalars[2]!++;
      const cs = cacheStatusOf(res);
      if (cs !== undefined)
        cache[
          storeIndex(req.url ?? '/') * CACHE_OUTCOMES.length + CACHE_OUTCOMES.indexOf(cacheOutcome(cs))
        ]!++;
    }
  };
  return { count, collectors };
}
