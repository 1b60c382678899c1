// Conformance adapter: undici 7's own private cache, the comparison issue 14 quotes (119 / 168
// required in ../shared's reference runner). undici's fetch (the package, not Node's bundled copy)
// over an Agent composed with interceptors.cache, type 'private' (RFC 9111: stores `private`
// responses, ignores s-maxage), memory store. One dispatcher, so one cache, for the whole run: the
// suite gives every test its own URLs.
//
//   npm run test:conformance -- --private --adapter scripts/conformance/adapters/undici-cache.mjs
import { Agent, cacheStores, fetch, interceptors } from 'undici';

const dispatcher = new Agent().compose(
  interceptors.cache({ store: new cacheStores.MemoryCacheStore(), type: 'private' }),
);

export const cachedFetch = (input, init = {}) => fetch(input, { ...init, dispatcher });
