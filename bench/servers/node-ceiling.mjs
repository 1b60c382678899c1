// Server: the Node ceiling, a bare node:http server answering a constant 1 KB buffer from memory. It is the
// reference: every static scenario is expected to get its 200 with 1024 bytes.
import { startNodeChild } from './node-child.mjs';

export default {
  name: 'node-ceiling',
  groups: ['static'],
  reference: true,
  start: (dir) => startNodeChild('node-ceiling.mjs', dir),
};
