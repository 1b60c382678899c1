// Gatehouse cache engine: the pure decision layer of an RFC 9111 HTTP cache.
//
// Serves two callers: the shared cache of the reverse proxy (`shared: true`) and the private cache
// of the fetch client (`shared: false`). Every function takes plain values (lowercase header maps,
// `StoredResponse`) and the clock as `nowMs`; nothing here imports node:, does I/O or reads a clock.
//
// Files:
//   storable.ts    isStorable: RFC 9111 §3, §3.5 (Authorization), §5.2.2.3 must-understand,
//                  qualified private (§5.2.2.7); 206 and 304 are never stored as complete responses.
//   partial.ts     completeFromPartial: a 206 carrying the whole representation as a 200 (§3.3, §3.4).
//   pieces.ts      partial entries (§3.3, §3.4): a 206 as a piece, strong validators, what a request
//                  lacks, combining pieces of the same strong validator within bounds.
//   stored-range.ts  storedRangeDecision: Range / If-Range against a stored 200 (RFC 9110 §14,
//                  §13.1.5, §8.8.2.2), multipart/byteranges bodies with a boundary found in no part.
//   freshness.ts   freshness / freshnessLifetimeSec (§4.2.1, heuristic §4.2.2), currentAgeSec
//                  (§4.2.3), isFresh, Age field values (§5.1).
//   request.ts     parseRequestDirectives (§5.2.1, Pragma §5.4), decideServe (§4, §4.2.4, §5.2.2,
//                  RFC 5861 stale-while-revalidate / stale-if-error, RFC 8246 immutable flag).
//   vary.ts        varyKey, matchesVary (§4.1); selectsByLanguage (Content-Language selection).
//   validate.ts    conditionalHeaders (§4.3.1), freshenHeaders / freshenStored (§4.3.4, §3.2),
//                  selectForUpdate (§4.3.4), selectValidated (a 304 to our own conditional request).
//   invalidate.ts  invalidationUris (§4.4).
//   targeted.ts    targeted cache control (RFC 9213) and Surrogate-Control.
//   store/         the stores (memory, disk, Redis): get, put, delete and an optional peek; the
//                  cache's operations built on them (entry-cache.ts); one shared contract test suite.
// The I/O around these (keys, coalescing, serving, Age, Cache-Status) is the proxy's:
// src/server/proxy/cache/index.ts (partial entries: src/server/proxy/cache/partial.ts), src/client/cache-partial.ts.
export type { Freshness, FreshnessOptions, FreshnessSource } from './freshness.js';
export {
  ageFieldSeconds,
  ageFieldValue,
  currentAgeSec,
  DEFAULT_HEURISTIC_CAP_SEC,
  DEFAULT_HEURISTIC_FRACTION,
  freshEndMs,
  freshness,
  freshnessLifetimeSec,
  isFresh,
} from './freshness.js';
export type { InvalidationInput } from './invalidate.js';
export { invalidationUris } from './invalidate.js';
export { completeFromPartial } from './partial.js';
export type { RequestDirectives, ServeDecision, ServeInput, StaleReason } from './request.js';
export { decideServe, parseRequestDirectives, plainFreshUntilMs } from './request.js';
export type { NotStorableReason, StorableInput, StorableResult } from './storable.js';
export { HEURISTICALLY_CACHEABLE_STATUSES, isHeuristicallyCacheable, isStorable } from './storable.js';
export type { StoredMultipart, StoredRangeDecision, StoredRangeInput } from './stored-range.js';
export { boundaryFor, multipartBody, multipartFor, storedRangeDecision } from './stored-range.js';
export type { TargetedOptions } from './targeted.js';
export { forwardedSurrogateControl, policyHeaders, surrogateCapability } from './targeted.js';
export type { HeaderMap, StoredResponse } from './types.js';
export { getHeader } from './types.js';
export {
  conditionalHeaders,
  freshenHeaders,
  freshenStored,
  selectForUpdate,
  selectValidated,
  storedHeaderFields,
} from './validate.js';
export { matchesVary, preferredLanguage, selectsByLanguage, varyKey } from './vary.js';
