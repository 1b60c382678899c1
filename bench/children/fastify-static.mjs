// Peer: fastify@5 with @fastify/static@8 serving the fixture root, logger off.
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import { announce, exitWithParent, requestedPort, root } from './runtime.mjs';

exitWithParent();
const app = Fastify({ logger: false });
await app.register(fastifyStatic, { root });
await app.listen({ port: requestedPort, host: '127.0.0.1' });
announce(app.server.address().port);
