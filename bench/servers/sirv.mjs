// Server: sirv@3 with ETags on node:http.
import { startNodeChild } from './node-child.mjs';

export default {
  name: 'sirv',
  groups: ['static'],
  start: (dir) => startNodeChild('sirv.mjs', dir),
};
