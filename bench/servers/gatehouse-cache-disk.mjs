// Server: gatehouse-cache with the disk store (its memory tier on, the default): same route, upstream
// and hit check, so the two columns compare the stores.

import { currentBuild } from './gatehouse.mjs';
import { cacheServer } from './gatehouse-cache.mjs';

export const define = (build) => cacheServer('gatehouse-cache-disk', 'disk', build);

export default define(currentBuild);
