// Cache stores behind one interface (types.ts: get, put, delete and an optional peek) and the cache's
// operations built on it (entry-cache.ts). This entry point is browser-safe: it carries the memory
// store only. The disk and Redis stores import node: modules; take them from './disk.js', './redis.js'.
export type { EntryCacheOptions, OwnedStore, PeekingEntryCache } from './entry-cache.js';
export { EntryCache, entryCache, openEntryCache } from './entry-cache.js';
export type { MemoryStoreOptions } from './memory.js';
export { createMemoryCache, createMemoryStore, MemoryStore } from './memory.js';
export type {
  BodySource,
  CacheStore,
  EntryBody,
  EntryMeta,
  PurgeFilter,
  PutResult,
  Read,
  ReadResult,
  Removal,
  Selected,
  StoredEntry,
  StoreHooks,
  StoreOptions,
  Write,
} from './types.js';
export { CacheStoreError } from './types.js';
