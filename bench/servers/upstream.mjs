// The upstream behind every proxy (bench/children/upstream.mjs): one process shared by all proxies, started
// on first use and pinned to CPU 0 like the proxies themselves. Proxy and upstream then share the server CPU
// and wrk keeps CPU 1 to itself; every proxy pays for the same upstream on the same core, so the ratios stay
// fair (pinning the upstream next to wrk would let it steal the load generator's CPU instead).
import { startNodeChild } from './node-child.mjs';

/** `get()` starts the upstream once and resolves { port, url, pid, cpus }; `stop()`; `problem()`. */
export function createUpstream({ dir, log }) {
  let started;
  let handle;
  return {
    get() {
      started ??= startNodeChild('upstream.mjs', dir).then(
        (h) => {
          handle = h;
          log?.(`  upstream: pid ${h.pid} on 127.0.0.1:${h.port}${h.cpus ? `, CPUs ${h.cpus}` : ''}`);
          return { port: h.port, url: `http://127.0.0.1:${h.port}`, pid: h.pid, cpus: h.cpus };
        },
        (err) => {
          throw new Error(`the upstream failed to start: ${err.message}`);
        },
      );
      return started;
    },
    /** Why the upstream cannot serve (it exited), or undefined. */
    problem() {
      const child = handle?.child;
      if (!child || (child.exitCode === null && child.signalCode === null)) return undefined;
      return `the upstream exited (${child.signalCode ?? `code ${child.exitCode}`})\n${handle.logs()}`;
    },
    get pid() {
      return handle?.pid;
    },
    async stop() {
      await handle?.stop();
    },
  };
}
