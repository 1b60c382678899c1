// Server: serve-static@2 on node:http.
import { startNodeChild } from './node-child.mjs';

export default {
  name: 'serve-static',
  groups: ['static'],
  start: (dir) => startNodeChild('serve-static.mjs', dir),
};
