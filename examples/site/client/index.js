// gatehouse-http/client: browser and Node. Plain ESM with relative imports only, no `node:` and nothing
// from server/, config/ or cli/, so a page can load dist/client/index.js with no bundler.
export { cacheApiTier } from './cache-api-tier.js';
export { memoryTier } from './cache-tier.js';
export { createCachingFetch } from './caching-fetch.js';
export { onMessageFrom, postTo } from './message.js';
export { DEAD_LINK_CODE, ReconnectingWebSocket, WsCloseEvent, WsErrorEvent, WsMessageEvent, } from './websocket.js';
