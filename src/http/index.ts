// Pure HTTP semantics: no node: imports, no I/O, no clock (time comes in as nowMs).
export type { CacheControl } from './cache-control.js';
export {
  DELTA_SECONDS_MAX,
  deltaSeconds,
  fieldNames,
  formatCacheControl,
  hasDirective,
  parseCacheControl,
  parseDeltaSeconds,
} from './cache-control.js';
export type { IfRangeInput, PreconditionInput, PreconditionResult } from './conditional.js';
export { evaluateIfRange, evaluatePreconditions } from './conditional.js';
export type {
  CorsDecision,
  CorsHeader,
  CorsHeaderRule,
  CorsPolicy,
  CorsPolicyInput,
  CorsRequest,
  OriginRule,
} from './cors.js';
export {
  CORS_DEFAULTS,
  compileCorsPolicy,
  corsHeaderRule,
  corsOptionIssues,
  decideCors,
  isOriginAllowed,
  MAX_REQUEST_HEADER_NAMES,
  parseOriginRule,
} from './cors.js';
export { formatHttpDate, parseHttpDate } from './dates.js';
export type { EntityTag } from './etag.js';
export {
  entityTagListMatches,
  formatEntityTag,
  isStar,
  parseEntityTag,
  parseEntityTagList,
  strongMatch,
  strongTag,
  weakMatch,
  weakTag,
} from './etag.js';
export {
  isToken,
  listIncludesToken,
  parseParameters,
  quote,
  splitList,
  trimOws,
  unquote,
} from './lists.js';
export { negotiateEncoding, prefersHtml } from './negotiate.js';
export type { ProblemDetails } from './problem.js';
export { escapeHtml, problemJson } from './problem.js';
export type { ByteRange, MultipartByteranges, ParseRangeOptions, RangeDecision } from './range.js';
export {
  formatContentRange,
  formatUnsatisfiedRange,
  multipartByterangesParts,
  parseRange,
} from './range.js';
export type { AuthorityResult, TargetResult } from './target.js';
export { canonicalOriginForm, parseAuthority, parseRequestTarget } from './target.js';
export type { SubprotocolOffer } from './websocket-relay.js';
export { parseSubprotocolOffer, relayedCloseCode } from './websocket-relay.js';
