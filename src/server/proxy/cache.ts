// The route cache's public face for the proxy (handler.ts) and tests; the modules are in ./cache/.
export * from './cache/index.js';
