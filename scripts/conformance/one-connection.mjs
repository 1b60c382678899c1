// Preload for the suite's CLI (`node --import ./one-connection.mjs cli.mjs`): one TCP connection per
// request. http-cache-tests 0.4.5 fetches through node-fetch 2 without an agent, which falls back to
// http.globalAgent; since Node 19 that agent keeps connections alive and node-fetch never retries a
// request that fails on a reused connection. The suite's published results were taken on Node <= 18,
// where every request had its own connection, so we restore that. The git HEAD suite
// (test/fixtures/cache-tests-HEAD) calls the global fetch instead, whose undici dispatcher keeps
// connections alive too: `pipelining: 0` is undici's way to say no keep-alive.
import http from 'node:http';
import https from 'node:https';
import { Agent, setGlobalDispatcher } from 'undici';

http.globalAgent = new http.Agent({ keepAlive: false });
https.globalAgent = new https.Agent({ keepAlive: false });
setGlobalDispatcher(new Agent({ pipelining: 0 }));
