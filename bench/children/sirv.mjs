// Peer: sirv@3 in production mode (files indexed at start-up) with ETags.
import http from 'node:http';
import sirv from 'sirv';
import { listen, root } from './runtime.mjs';

listen(http.createServer(sirv(root, { etag: true })));
