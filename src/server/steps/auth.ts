// Access control by path prefix: client address allow/deny lists and HTTP Basic authentication
// (RFC 7617) against scrypt password hashes. Rules are ordered; the first whose prefix matches the
// request path decides. CORS preflights pass untouched where CORS applies (they carry no credentials,
// Fetch §3.2.5); elsewhere a preflight-shaped OPTIONS is an ordinary request. Password checks are
// shared fairly between client addresses and throttled per address after repeated failures
// (login-guard.ts). The rules' shape and checks are auth-options.ts; the hashes password-hash.ts.
import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  formatBasicChallenge,
  normalizeUserId,
  parseBasicAuthorization,
  privateCacheControl,
} from '../../http/basic-auth.js';
import { compileIpRanges, parseIp } from '../../http/ip.js';
import type { RequestFacts, Step } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, HeadFieldValue, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import type { StepContext } from '../node/types.js';
import type { Logger } from '../ops/log.js';
import {
  type AuthRule,
  authRuleIssues,
  DEFAULT_REALM,
  FAILURE_DEFAULTS,
  normalizePrefix,
  underPrefix,
} from './auth-options.js';
import { type CorsOptions, compileCorsPreflight } from './cors.js';
import { rulePath } from './headers.js';
import { bucketKey } from './limits.js';
import {
  checkThrottle,
  type FailurePolicy,
  type FailureRecord,
  FairQueue,
  recordFailure,
} from './login-guard.js';
import { parseScryptHash, type ScryptHash, verifyPassword } from './password-hash.js';

export type { AuthRule, BasicAuthOptions } from './auth-options.js';

export interface AuthDeps {
  /** The clock for the verified-credentials cache and the failure windows; default Date.now. */
  readonly nowMs?: () => number;
  /** How long verified credentials are remembered; default 60 s. */
  readonly cacheTtlMs?: number;
  /** scrypt runs at once (each takes a libuv thread that file reads also need); default 2. */
  readonly maxConcurrentHashes?: number;
  /** scrypt runs waiting beyond that before new ones are refused with 503; default 64. */
  readonly maxQueuedHashes?: number;
  /** scrypt runs one client address (IPv6: its /64) may have waiting before 429; default 2. */
  readonly maxQueuedHashesPerClient?: number;
  /** The password check; default verifyPassword (scrypt). Tests count calls through it. */
  readonly verifyPassword?: (password: string, hash: ScryptHash) => Promise<boolean>;
  /** The `cors` section: a preflight-shaped OPTIONS skips auth only where CORS applies to it (the
   *  CORS step answers those). Without it, no request is a preflight to auth. */
  readonly cors?: CorsOptions | undefined;
}

const CACHE_ENTRIES = 1024;
/** Clients whose failures are remembered per rule (least recently failed dropped first). */
const FAILURE_ENTRIES = 10_000;
/** Password checks are keyed by client like the rate limit: IPv6 clients by their /64. */
const CLIENT_IPV6_PREFIX = 64;

interface CompiledBasic {
  readonly challenge: string;
  readonly users: ReadonlyMap<string, ScryptHash>;
  /** Same parameters as the users' hashes: unknown user-ids cost a full scrypt run too. */
  readonly dummy: ScryptHash;
  /** sha256(Authorization) -> expiry (ms) of credentials verified recently. */
  readonly verified: LRUCache<string, number>;
  readonly inFlight: Map<string, Promise<boolean>>;
  readonly failurePolicy: FailurePolicy;
  /** Client key -> failed checks in its current window. */
  readonly failures: LRUCache<string, FailureRecord>;
}

interface CompiledRule {
  readonly prefix: string;
  readonly allowed: ((a: Uint8Array) => boolean) | undefined;
  readonly denied: ((a: Uint8Array) => boolean) | undefined;
  readonly basic: CompiledBasic | undefined;
}

function compileRule(rule: AuthRule, index: number): CompiledRule {
  const issues = authRuleIssues(rule);
  if (issues.length > 0) {
    const i = issues[0]!;
    throw new TypeError(`auth[${index}]${i.path.map((p) => `.${p}`).join('')}: ${i.message}`);
  }
  let basic: CompiledBasic | undefined;
  if (rule.basic !== undefined) {
    const users = new Map<string, ScryptHash>();
    for (const [name, stored] of Object.entries(rule.basic.users)) {
      users.set(normalizeUserId(name), parseScryptHash(stored) as ScryptHash);
    }
    const model = users.values().next().value as ScryptHash;
    basic = {
      challenge: formatBasicChallenge(rule.basic.realm ?? DEFAULT_REALM),
      users,
      dummy: { ...model, salt: randomBytes(model.salt.length), hash: randomBytes(model.hash.length) },
      verified: new LRUCache({ max: CACHE_ENTRIES }),
      inFlight: new Map(),
      failurePolicy: {
        maxFailures: rule.basic.maxFailures ?? FAILURE_DEFAULTS.maxFailures,
        windowMs: (rule.basic.failureWindowSec ?? FAILURE_DEFAULTS.failureWindowSec) * 1000,
      },
      failures: new LRUCache({ max: FAILURE_ENTRIES }),
    };
  }
  return {
    prefix: normalizePrefix(rule.prefix),
    allowed: rule.allow !== undefined ? compileIpRanges(rule.allow) : undefined,
    denied: rule.deny !== undefined ? compileIpRanges(rule.deny) : undefined,
    basic,
  };
}

type GateResult<T> = Promise<T> | 'key-full' | 'queue-full';

/** The FairQueue driving real tasks: at most `maxRunning` at once, the rest served round-robin by key. */
function createFairGate(limits: ConstructorParameters<typeof FairQueue>[0]) {
  const queue = new FairQueue<() => void>(limits);
  const done = () => queue.finish()?.();
  return {
    run<T>(key: string, task: () => Promise<T>): GateResult<T> {
      let start!: () => void;
      const p = new Promise<T>((resolve, reject) => {
        start = () => {
          task().then(resolve, reject).finally(done);
        };
      });
      const a = queue.admit(key, start);
      if (a.kind === 'refused') return a.reason;
      if (a.kind === 'run') start();
      return p;
    },
  };
}

/**
 * Makes the response private to the client whatever the handler chooses (privateCacheControl):
 * the Cache-Control given to writeHead, or set on the response, is rewritten as the head goes out.
 * Node's implicit head (res.end without writeHead) goes through writeHead too.
 */
export function makeResponsePrivate(res: ResponseSink): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ResponseSink, ...args: unknown[]) {
    const at = typeof args[1] === 'string' ? 2 : 1; // writeHead(status, [reason], [headers])
    const headers = args[at];
    let rewritten = false;
    if (Array.isArray(headers)) {
      const copy = [...(headers as unknown[])];
      for (let i = 0; i + 1 < copy.length; i += 2) {
        if (String(copy[i]).toLowerCase() === 'cache-control') {
          copy[i + 1] = privateCacheControl(String(copy[i + 1]));
          rewritten = true;
        }
      }
      args[at] = copy;
    } else if (headers !== undefined && headers !== null && typeof headers === 'object') {
      const copy: Record<string, HeadFieldValue | undefined> = {
        ...(headers as Record<string, HeadFieldValue | undefined>),
      };
      for (const k of Object.keys(copy)) {
        if (k.toLowerCase() === 'cache-control') {
          copy[k] = privateCacheControl(String(copy[k]));
          rewritten = true;
        }
      }
      args[at] = copy;
    }
    if (!rewritten) {
      const current = this.getHeader('cache-control');
      this.setHeader(
        'Cache-Control',
        privateCacheControl(current === undefined ? undefined : String(current)),
      );
    }
    return (writeHead as (...a: unknown[]) => unknown).apply(this, args);
  } as ResponseSink['writeHead'];
}

const UNAUTHORIZED_DETAIL = 'Valid credentials are required for this resource.';

/** A full gate: this client's share of waiting checks is taken (429), or every place is (503). */
const GATE_REFUSALS = {
  'key-full': [ERRORS.tooManyRequests, 'Too many logins at once from this client.'],
  'queue-full': [ERRORS.serviceUnavailable, 'Too many logins at once; retry shortly.'],
} as const;

/**
 * The failure throttle of `client` under `b`: undefined to go on to the password check, else the
 * seconds until its window ends. The first refusal of each window is logged.
 */
function throttled(b: CompiledBasic, client: string, nowMs: number, logger: Logger): number | undefined {
  const t = checkThrottle(b.failures.get(client), nowMs, b.failurePolicy);
  if (t.record === undefined) b.failures.delete(client);
  else b.failures.set(client, t.record);
  if (t.kind === 'allow') return undefined;
  if (t.warn) {
    logger.warn(
      { client, failures: t.record.failures, retryAfterSec: t.retryAfterSec },
      'password checks throttled: too many failed logins from this client',
    );
  }
  return t.retryAfterSec;
}

/** What the Basic checks of one auth step share, built once by createAuth. */
interface BasicState {
  readonly ctx: StepContext;
  readonly now: () => number;
  /** How long verified credentials are remembered. */
  readonly ttlMs: number;
  /** Fair scheduling of scrypt runs between client addresses. */
  readonly gate: ReturnType<typeof createFairGate>;
  readonly check: (password: string, hash: ScryptHash) => Promise<boolean>;
}

function challenge(req: ExchangeRequest, res: ResponseSink, b: CompiledBasic): true {
  sendError(req, res, ERRORS.unauthorized, UNAUTHORIZED_DETAIL, { 'WWW-Authenticate': b.challenge });
  return true;
}

function verify(
  st: BasicState,
  b: CompiledBasic,
  client: string,
  key: string,
  userId: string,
  password: string,
): GateResult<boolean> {
  const pending = b.inFlight.get(key);
  if (pending !== undefined) return pending;
  const stored = b.users.get(userId);
  const run = st.gate.run(client, async () => {
    // Unknown user-ids run scrypt too, so timing does not tell which user-ids exist.
    const ok = await st.check(password, stored ?? b.dummy);
    return ok && stored !== undefined;
  });
  if (typeof run === 'string') return run;
  const p = run.finally(() => b.inFlight.delete(key));
  b.inFlight.set(key, p);
  return p;
}

/** Basic credentials under rule `b`: true when answered (401/429/503), false to pass. */
function basic(
  st: BasicState,
  req: ExchangeRequest,
  res: ResponseSink,
  b: CompiledBasic,
  facts: RequestFacts,
): boolean | Promise<boolean> {
  const { ctx, now } = st;
  const header = req.headers.authorization as string | undefined;
  const creds = parseBasicAuthorization(header);
  if (creds.kind !== 'credentials') return challenge(req, res, b);
  const pass = (): false => {
    makeResponsePrivate(res);
    facts.authorized = true;
    facts.user = creds.userId;
    return false;
  };
  const key = createHash('sha256').update(header!).digest('base64');
  const until = b.verified.get(key);
  // Credentials verified recently pass even from a throttled client: no check runs, and whoever
  // sends them knows the password already.
  if (until !== undefined && until > now()) return pass();

  const client = bucketKey(ctx.clientAddress(req), CLIENT_IPV6_PREFIX);
  const waitSec = throttled(b, client, now(), ctx.logger);
  if (waitSec !== undefined) {
    // RFC 6585 §4: 429 with Retry-After; no scrypt run until the window ends.
    sendError(req, res, ERRORS.tooManyRequests, 'Too many failed logins; retry later.', {
      'Retry-After': String(waitSec),
    });
    return true;
  }
  const pending = verify(st, b, client, key, creds.userId, creds.password);
  if (typeof pending === 'string') {
    const [entry, detail] = GATE_REFUSALS[pending];
    sendError(req, res, entry, detail, { 'Retry-After': '1' });
    return true;
  }
  return pending.then((ok) => {
    if (!ok) {
      b.failures.set(client, recordFailure(b.failures.get(client), now(), b.failurePolicy));
      return challenge(req, res, b);
    }
    b.failures.delete(client); // a success resets the client's count
    b.verified.set(key, now() + st.ttlMs);
    return pass();
  });
}

/**
 * The access control step, or undefined without rules. Per request: a CORS preflight where CORS
 * applies -> pass; first rule whose prefix covers the path; deny list -> 403; allow list without a
 * match -> 403; Basic: missing/malformed/wrong credentials -> 401 with the challenge (one message for
 * every case), too many failures from this client -> 429, right -> pass, with the response made
 * private (RFC 9111 §3.5). A path that cannot be decoded -> 400, so an odd encoding cannot slip past
 * a prefix.
 */
export function createAuth(
  rules: readonly AuthRule[],
  ctx: StepContext,
  deps: AuthDeps = {},
): Step | undefined {
  if (rules.length === 0) return undefined;
  const compiled = rules.map(compileRule);
  const st: BasicState = {
    ctx,
    now: deps.nowMs ?? Date.now,
    ttlMs: deps.cacheTtlMs ?? 60_000,
    gate: createFairGate({
      maxRunning: deps.maxConcurrentHashes ?? 2,
      maxQueued: deps.maxQueuedHashes ?? 64,
      maxQueuedPerKey: deps.maxQueuedHashesPerClient ?? 2,
    }),
    check: deps.verifyPassword ?? verifyPassword,
  };
  const isPreflight = compileCorsPreflight(deps.cors);

  return (req, res, cx) => {
    // A preflight carries no credentials; `OPTIONS *` (RFC 9112 §3.2.4) names no resource.
    if (req.url === '*' || isPreflight(req, cx)) return false;
    const path = rulePath(cx);
    if (path === null) {
      sendError(req, res, ERRORS.badRequest, 'The request path cannot be decoded.');
      return true;
    }
    const lower = path.toLowerCase();
    let rule: CompiledRule | undefined;
    for (const r of compiled) {
      if (underPrefix(lower, r.prefix)) {
        rule = r;
        break;
      }
    }
    if (rule === undefined) return false;

    if (rule.allowed !== undefined || rule.denied !== undefined) {
      const addr = parseIp(ctx.clientAddress(req));
      // An address we cannot read (unknown, obfuscated) matches no list: refused by an allow list.
      if ((addr && rule.denied?.(addr)) || (rule.allowed !== undefined && !(addr && rule.allowed(addr)))) {
        sendError(req, res, ERRORS.forbidden, 'Access from this address is not allowed.');
        return true;
      }
    }
    const b = rule.basic;
    if (b === undefined) {
      makeResponsePrivate(res); // the answer depends on the client address
      cx.facts.authorized = true;
      return false;
    }
    return basic(st, req, res, b, cx.facts);
  };
}

/** What the auth feature is made from: its rules, and the `cors` section (preflights skip auth). */
export interface AuthFeatureOptions {
  readonly rules: readonly AuthRule[];
  readonly cors?: CorsOptions | undefined;
}

/** Access control as a feature (core/feature.ts): a gate step, off without rules. */
export function create(options: AuthFeatureOptions, kernel: StepContext): Feature | undefined {
  const gate = createAuth(options.rules, kernel, { cors: options.cors });
  return gate && { gate };
}
