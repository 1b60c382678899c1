// Access control by path prefix: client address allow/deny lists and HTTP Basic authentication
// (RFC 7617) against scrypt password hashes. Rules are ordered; the first whose prefix matches the
// request path decides. CORS preflights pass untouched (they carry no credentials, Fetch §3.2.5).
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import {
  formatBasicChallenge,
  normalizePassword,
  normalizeUserId,
  parseBasicAuthorization,
  privateCacheControl,
} from '../http/basic-auth.js';
import { compileIpRanges, parseIp, parseIpRange } from '../http/ip.js';
import { requestFacts, type Step, type StepContext } from './context.js';
import { ERRORS, sendError } from './errors.js';
import { type RuleIssue, rulePath } from './headers.js';

export interface BasicAuthOptions {
  /** The protection space shown by browsers (RFC 7617 §2); default "Gatehouse". */
  realm?: string | undefined;
  /** user-id -> scrypt hash (`scrypt$N$r$p$salt$hash`, from `gatehouse hash-password`). */
  users: Record<string, string>;
}

export interface AuthRule {
  /** URL path prefix, matched by whole segments against the decoded path, ignoring case (`/admin`
   *  covers `/admin/x` and `/ADMIN/x`, not `/administrator`). */
  prefix: string;
  basic?: BasicAuthOptions | undefined;
  /** Client addresses, CIDRs or keywords (loopback, private, linklocal) allowed; others get 403. */
  allow?: string[] | undefined;
  /** Client addresses, CIDRs or keywords refused with 403; deny wins over allow. */
  deny?: string[] | undefined;
}

export const DEFAULT_REALM = 'Gatehouse';

// ---------------------------------------------------------------------------------------------------
// Password hashes: scrypt (RFC 7914) in a self-describing string.

export interface ScryptHash {
  readonly N: number;
  readonly r: number;
  readonly p: number;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

/** Defaults for new hashes: OWASP's scrypt equivalent of N=2^17,r=8,p=1 with 32 MiB instead of 128. */
export const SCRYPT_DEFAULTS = { N: 2 ** 15, r: 8, p: 3 } as const;
/** Least work accepted (N*r*p): weaker hashes are refused at load, as plaintext is. */
export const SCRYPT_MIN_WORK = 2 ** 17;
const SCRYPT_MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const HASH_FORMAT =
  'expected a scrypt hash scrypt$N$r$p$<salt base64>$<hash base64> (run gatehouse hash-password)';

/** Parses `scrypt$N$r$p$<salt b64>$<hash b64>`; a string explains what is wrong (never echoing it). */
export function parseScryptHash(s: string): ScryptHash | string {
  const parts = s.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return `not a password hash: ${HASH_FORMAT}`;
  const [, nText, rText, pText, saltText, hashText] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (![nText, rText, pText].every((t) => /^[1-9]\d{0,9}$/.test(t)))
    return `bad scrypt parameters: ${HASH_FORMAT}`;
  const N = Number(nText);
  const r = Number(rText);
  const p = Number(pText);
  if (N < 2 || (N & (N - 1)) !== 0) return 'scrypt N must be a power of two';
  if (N * r * p < SCRYPT_MIN_WORK) return `scrypt cost too low: N*r*p must be at least ${SCRYPT_MIN_WORK}`;
  if (128 * N * r > SCRYPT_MAX_MEMORY_BYTES || p > 16)
    return 'scrypt parameters need too much memory or time';
  if (!BASE64.test(saltText) || !BASE64.test(hashText)) return `salt and hash must be base64: ${HASH_FORMAT}`;
  const salt = Buffer.from(saltText, 'base64');
  const hash = Buffer.from(hashText, 'base64');
  if (salt.length < 8) return 'scrypt salt must be at least 8 bytes';
  if (hash.length < 16 || hash.length > 128) return 'scrypt hash must be 16 to 128 bytes';
  return { N, r, p, salt, hash };
}

function derive(
  password: string,
  salt: Buffer,
  keylen: number,
  N: number,
  r: number,
  p: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** Hashes a password (normalised per RFC 7617 §2.1 first) into the stored format. */
export async function hashPassword(
  password: string,
  params: { N?: number; r?: number; p?: number } = {},
): Promise<string> {
  const { N = SCRYPT_DEFAULTS.N, r = SCRYPT_DEFAULTS.r, p = SCRYPT_DEFAULTS.p } = params;
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(normalizePassword(password), salt, KEY_BYTES, N, r, p);
  const out = `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
  const check = parseScryptHash(out);
  if (typeof check === 'string') throw new RangeError(check);
  return out;
}

/** Verifies a (normalised) password against a parsed hash in constant time for its length. */
export async function verifyPassword(password: string, h: ScryptHash): Promise<boolean> {
  const key = await derive(password, h.salt, h.hash.length, h.N, h.r, h.p);
  return timingSafeEqual(key, h.hash);
}

// ---------------------------------------------------------------------------------------------------
// Config checks, shared with src/config/access.ts so the file and library callers refuse the same.

const CONTROL = /[\x00-\x1f\x7f]/;

/** Problems in one rule, paths relative to the rule (`['basic', 'users', 'alice']`). */
export function authRuleIssues(rule: AuthRule): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const p = rule.prefix;
  if (!p.startsWith('/')) issues.push({ path: ['prefix'], message: 'must start with /' });
  else if (/[?#%\\]|\0/.test(p) || /\/\.{1,2}(?:\/|$)/.test(p) || p.includes('//'))
    issues.push({
      path: ['prefix'],
      message: 'must be a plain decoded path (no ?, #, %, \\, //, . or .. segments)',
    });
  if (rule.basic === undefined && rule.allow === undefined && rule.deny === undefined)
    issues.push({ path: [], message: 'an auth rule needs basic, allow or deny' });
  if (rule.basic !== undefined) {
    const realm = rule.basic.realm;
    if (realm !== undefined) {
      if (realm === '' || realm.length > 256 || CONTROL.test(realm) || /[^\x00-\xff]/.test(realm))
        issues.push({
          path: ['basic', 'realm'],
          message: 'must be 1-256 Latin-1 characters without controls',
        });
    }
    const names = Object.keys(rule.basic.users);
    if (names.length === 0) issues.push({ path: ['basic', 'users'], message: 'needs at least one user' });
    const seen = new Set<string>();
    for (const name of names) {
      const at = ['basic', 'users', name];
      // RFC 7617 §2: a user-id containing a colon cannot be sent; no control characters.
      if (name === '' || name.includes(':') || CONTROL.test(name))
        issues.push({
          path: at,
          message: 'user-ids are non-empty, without ":" or control characters (RFC 7617 §2)',
        });
      const n = normalizeUserId(name);
      if (seen.has(n))
        issues.push({ path: at, message: 'the same user-id twice (after Unicode NFC normalisation)' });
      seen.add(n);
      const h = parseScryptHash(String(rule.basic.users[name]));
      if (typeof h === 'string') issues.push({ path: at, message: h });
    }
  }
  for (const list of ['allow', 'deny'] as const) {
    for (const [i, entry] of (rule[list] ?? []).entries()) {
      const r = parseIpRange(entry);
      if (r.kind === 'invalid') issues.push({ path: [list, i], message: r.reason });
    }
  }
  return issues;
}

/** Lowercased and without a trailing slash: prefixes match case-insensitively, so a case-insensitive
 *  filesystem (macOS, Windows) cannot serve /ADMIN/x from /admin/x past the rule. Over-matching only
 *  ever asks for credentials where none were needed. */
function normalizePrefix(prefix: string): string {
  const p = prefix.toLowerCase();
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

function underPrefix(path: string, prefix: string): boolean {
  return (
    prefix === '/' || path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47)
  );
}

/** Problems across rules: each rule's own, plus a rule an earlier rule's prefix always wins over. */
export function authRulesIssues(rules: readonly AuthRule[]): RuleIssue[] {
  const issues: RuleIssue[] = [];
  for (const [i, rule] of rules.entries()) {
    for (const issue of authRuleIssues(rule))
      issues.push({ path: [i, ...issue.path], message: issue.message });
    for (let j = 0; j < i; j++) {
      if (underPrefix(normalizePrefix(rule.prefix), normalizePrefix(rules[j]!.prefix))) {
        issues.push({
          path: [i, 'prefix'],
          message: `never used: auth[${j}] (prefix ${rules[j]!.prefix}) matches first`,
        });
        break;
      }
    }
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------------
// The step.

export interface AuthDeps {
  /** The clock for the verified-credentials cache; default Date.now. */
  readonly nowMs?: () => number;
  /** How long verified credentials are remembered; default 60 s. */
  readonly cacheTtlMs?: number;
  /** scrypt runs at once (each takes a libuv thread that file reads also need); default 2. */
  readonly maxConcurrentHashes?: number;
  /** scrypt runs waiting beyond that before new ones are refused with 503; default 64. */
  readonly maxQueuedHashes?: number;
  /** The password check; default verifyPassword (scrypt). Tests count calls through it. */
  readonly verifyPassword?: (password: string, hash: ScryptHash) => Promise<boolean>;
}

const CACHE_ENTRIES = 1024;

interface CompiledBasic {
  readonly challenge: string;
  readonly users: ReadonlyMap<string, ScryptHash>;
  /** Same parameters as the users' hashes: unknown user-ids cost a full scrypt run too. */
  readonly dummy: ScryptHash;
  /** sha256(Authorization) -> expiry (ms) of credentials verified recently. */
  readonly verified: LRUCache<string, number>;
  readonly inFlight: Map<string, Promise<boolean>>;
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
    };
  }
  return {
    prefix: normalizePrefix(rule.prefix),
    allowed: rule.allow !== undefined ? compileIpRanges(rule.allow) : undefined,
    denied: rule.deny !== undefined ? compileIpRanges(rule.deny) : undefined,
    basic,
  };
}

/** A FIFO gate: at most `max` tasks run at once, at most `maxQueued` wait. */
function createGate(max: number, maxQueued: number) {
  let running = 0;
  const queue: (() => void)[] = [];
  const next = () => {
    running--;
    queue.shift()?.();
  };
  return {
    /** Runs `task` when a slot frees; undefined when the queue is full. */
    run<T>(task: () => Promise<T>): Promise<T> | undefined {
      if (running >= max && queue.length >= maxQueued) return undefined;
      return new Promise<T>((resolve, reject) => {
        const start = () => {
          running++;
          task().then(resolve, reject).finally(next);
        };
        if (running < max) start();
        else queue.push(start);
      });
    },
  };
}

function isPreflight(req: IncomingMessage): boolean {
  return (
    req.method === 'OPTIONS' &&
    req.headers.origin !== undefined &&
    req.headers['access-control-request-method'] !== undefined
  );
}

/**
 * Makes the response private to the client whatever the handler chooses (privateCacheControl):
 * the Cache-Control given to writeHead, or set on the response, is rewritten as the head goes out.
 * Node's implicit head (res.end without writeHead) goes through writeHead too.
 */
export function makeResponsePrivate(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
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
      const copy: OutgoingHttpHeaders = { ...(headers as OutgoingHttpHeaders) };
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
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

const UNAUTHORIZED_DETAIL = 'Valid credentials are required for this resource.';

/**
 * The access control step, or undefined without rules. Per request: CORS preflight -> pass; first rule
 * whose prefix covers the path; deny list -> 403; allow list without a match -> 403; Basic:
 * missing/malformed/wrong credentials -> 401 with the challenge (one message for every case), right
 * -> pass, with the response made private (RFC 9111 §3.5). A path that cannot be decoded -> 400, so an
 * odd encoding cannot slip past a prefix.
 */
export function createAuth(
  rules: readonly AuthRule[],
  ctx: StepContext,
  deps: AuthDeps = {},
): Step | undefined {
  if (rules.length === 0) return undefined;
  const compiled = rules.map(compileRule);
  const now = deps.nowMs ?? Date.now;
  const ttlMs = deps.cacheTtlMs ?? 60_000;
  const gate = createGate(deps.maxConcurrentHashes ?? 2, deps.maxQueuedHashes ?? 64);
  const check = deps.verifyPassword ?? verifyPassword;

  const challenge = (req: IncomingMessage, res: ServerResponse, b: CompiledBasic): true => {
    sendError(req, res, ERRORS.unauthorized, UNAUTHORIZED_DETAIL, { 'WWW-Authenticate': b.challenge });
    return true;
  };

  const verify = (
    b: CompiledBasic,
    key: string,
    userId: string,
    password: string,
  ): Promise<boolean> | undefined => {
    const pending = b.inFlight.get(key);
    if (pending !== undefined) return pending;
    const stored = b.users.get(userId);
    const run = gate.run(async () => {
      // Unknown user-ids run scrypt too, so timing does not tell which user-ids exist.
      const ok = await check(password, stored ?? b.dummy);
      return ok && stored !== undefined;
    });
    if (run === undefined) return undefined;
    const p = run.finally(() => b.inFlight.delete(key));
    b.inFlight.set(key, p);
    return p;
  };

  return (req, res) => {
    // A preflight carries no credentials; `OPTIONS *` (RFC 9112 §3.2.4) names no resource.
    if (isPreflight(req) || req.url === '*') return false;
    const path = rulePath(req.url);
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
      requestFacts(req).authorized = true;
      return false;
    }
    const header = req.headers.authorization;
    const creds = parseBasicAuthorization(header);
    if (creds.kind !== 'credentials') return challenge(req, res, b);
    const key = createHash('sha256').update(header!).digest('base64');
    const until = b.verified.get(key);
    if (until !== undefined && until > now()) {
      makeResponsePrivate(res);
      Object.assign(requestFacts(req), { authorized: true, user: creds.userId });
      return false;
    }
    const pending = verify(b, key, creds.userId, creds.password);
    if (pending === undefined) {
      sendError(req, res, ERRORS.serviceUnavailable, 'Too many logins at once; retry shortly.', {
        'Retry-After': '1',
      });
      return true;
    }
    return pending.then((ok) => {
      if (!ok) return challenge(req, res, b);
      b.verified.set(key, now() + ttlMs);
      makeResponsePrivate(res);
      Object.assign(requestFacts(req), { authorized: true, user: creds.userId });
      return false;
    });
  };
}
