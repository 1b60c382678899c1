// Server: gatehouse-cache with the disk store (its memory tier on, the default): same route, upstream
// and hit check, so the two columns compare the stores.
import { cacheServer } from './gatehouse-cache.mjs';

export default cacheServer('gatehouse-cache-disk', 'disk');
