// Peer: fastify@5 with @fastify/http-proxy@11 (undici pool via @fastify/reply-from), /api/... ->
// BENCH_UPSTREAM/..., logger off.
import proxy from '@fastify/http-proxy';
import Fastify from 'fastify';
import { announce, exitWithParent, requestedPort, upstream } from './runtime.mjs';

exitWithParent();
const app = Fastify({ logger: false });
await app.register(proxy, { upstream: upstream(), prefix: '/api', rewritePrefix: '' });
await app.listen({ port: requestedPort, host: '127.0.0.1' });
announce(app.server.address().port);
