// Every check `gatehouse check` runs, in report order. Each is a pure function over a Recording.
import type { Check } from '../types.js';
import { checkCaching } from './caching.js';
import { checkCoding } from './coding.js';
import { checkSecurity } from './security.js';

export const CHECKS: readonly Check[] = [checkCaching, checkCoding, checkSecurity];
