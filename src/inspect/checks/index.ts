// Every check `gatehouse check` runs, in report order. Each is a pure function over a Recording.
import type { Check } from '../types.js';
import { checkCaching } from './caching.js';
import { checkCoding } from './coding.js';
import { checkCors } from './cors.js';
import { checkJsonp } from './jsonp.js';
import { checkProtocol } from './protocol.js';
import { checkRedirects } from './redirects.js';
import { checkSecurity } from './security.js';
import { checkStatus } from './status.js';
import { checkValidators } from './validators.js';

export const CHECKS: readonly Check[] = [
  checkStatus,
  checkRedirects,
  checkProtocol,
  checkCaching,
  checkValidators,
  checkCoding,
  checkCors,
  checkJsonp,
  checkSecurity,
];
