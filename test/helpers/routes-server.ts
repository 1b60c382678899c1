// A server with library routes, for the routes suites: the routes come from a module of
// test/fixtures/runtimes/ (`routes({ count, reply })`), so the runtime matrix's child (serve-config.mjs)
// serves the same ones on Bun and Deno as the in-process server does on Node. `counts()` gives what the
// handlers counted, with `log:error` for each error the server logged; `errors()` those errors.
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import type { Logger } from '../../src/server/ops/log.js';
import { reply } from '../../src/server/routes/reply.js';
import type { Route } from '../../src/server/routes/routes.js';
import { askRuntime, startRuntimeServer, TEST_RUNTIME } from './runtime-server.js';
import { FIXTURES } from './runtimes.js';

export interface RoutesServer {
  readonly app: Gatehouse;
  readonly url: string;
  readonly port: number;
  /** What the handlers counted, by key; `log:error` for each error logged. */
  counts(): Promise<Record<string, number>>;
  /** The errors logged: the request's URL and the error's message. */
  errors(): Promise<LoggedError[]>;
}

export interface LoggedError {
  readonly url?: string;
  readonly message?: string;
}

/** The signature of a routes module's export. */
export type RoutesModule = (o: { count(key: string): void; reply: typeof reply }) => Route[];

/** The routes of `module` (a file name in test/fixtures/runtimes/) over `config`, on the runtime under test. */
export async function startRoutes(
  module: string,
  root: string,
  config: GatehouseConfigInput = {},
): Promise<RoutesServer> {
  const input = { log: { format: 'off' as const }, ...config, root, listen: { host: '127.0.0.1', port: 0 } };
  if (TEST_RUNTIME !== undefined) {
    const s = await startRuntimeServer(TEST_RUNTIME, input, module);
    return {
      ...s,
      counts: () => askRuntime<Record<string, number>>(s.app, 'counts'),
      errors: () => askRuntime<LoggedError[]>(s.app, 'errors'),
    };
  }
  const counts: Record<string, number> = {};
  const count = (key: string): void => {
    counts[key] = (counts[key] ?? 0) + 1;
  };
  const { routes } = (await import(`${FIXTURES}${module}`)) as { routes: RoutesModule };
  const errors: LoggedError[] = [];
  const logger: Logger = {
    info() {},
    warn() {},
    error: (o) => {
      count('log:error');
      const r = (typeof o === 'object' && o !== null ? o : {}) as { url?: string; err?: Error };
      errors.push({ url: r.url, message: r.err?.message });
    },
    isLevelEnabled: () => true,
  };
  const app = createGatehouse(toServerOptions(parseConfig(input)), {
    routes: routes({ count, reply }),
    logger,
  });
  const { url, port } = await app.listen();
  return { app, url, port, counts: async () => counts, errors: async () => errors };
}
