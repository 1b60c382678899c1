// Cache stores behind one interface (types.ts). This entry point is browser-safe: it carries the
// memory store only. The disk store imports node: modules; take it from './disk.js'.
export type { MemoryStoreOptions } from './memory.js';
export { createMemoryStore } from './memory.js';
export type {
  BodySource,
  CacheStore,
  EntryBody,
  EntryMeta,
  PurgeFilter,
  PutResult,
  StoredEntry,
  StoreOptions,
} from './types.js';
export { CacheStoreError } from './types.js';
