// Every check `gatehouse check` runs, in report order. Each is a pure function over a Recording.
import type { Check } from '../types.js';
import { checkProtocol } from './protocol.js';

export const CHECKS: readonly Check[] = [
  // redirects
  checkProtocol,
];
