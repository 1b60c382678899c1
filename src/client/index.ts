// gatehouse-http/client: browser and Node. Plain ESM with relative imports only, no `node:` and nothing
// from server/, config/ or cli/, so a page can load dist/client/index.js with no bundler.

export { type CacheApiTierOptions, cacheApiTier } from './cache-api-tier.js';
export type { CachedResponse, CachedVariants, CacheTier, MemoryTier } from './cache-tier.js';
export { memoryTier } from './cache-tier.js';
export type {
  CacheStats,
  CachingFetch,
  CachingFetchOptions,
  CachingRequestInit,
  FetchLike,
  TierStats,
} from './caching-fetch.js';
export { createCachingFetch } from './caching-fetch.js';
export type { MessageFromOptions, MessageSource, PostTarget } from './message.js';
export { onMessageFrom, postTo } from './message.js';
export type { AfterClose, Backoff } from './schedule.js';
export type {
  ReconnectingWebSocketOptions,
  Timers,
  WebSocketConstructor,
  WebSocketLike,
  WsEventMap,
} from './websocket.js';
export {
  DEAD_LINK_CODE,
  ReconnectingWebSocket,
  WsCloseEvent,
  WsErrorEvent,
  WsMessageEvent,
} from './websocket.js';
