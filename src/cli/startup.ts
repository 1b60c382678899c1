// What `gatehouse serve` tells at start, before its `listening on` line: the config file in
// use (one in the working folder is applied silently otherwise), the root, one line per proxy prefix (with
// the path its upstream receives) and WebSocket path (as Caddy prints its sites), and warnings for a setup
// that can only answer 404.
import type { GatehouseConfig } from '../config/schema.js';

/** What the command found on disk (read once by the caller; this module does no I/O). */
export interface StartupFacts {
  readonly configFile: string | undefined;
  /** Entries in the root folder (0: empty). */
  readonly rootEntries: number;
  /** Whether static.spaFallback exists under the root. */
  readonly fallbackExists: boolean;
}

export interface Startup {
  readonly lines: string[];
  readonly warnings: string[];
}

type ProxyRoute = GatehouseConfig['proxy'][number];

/**
 * What an upstream receives for a request under the prefix, as the proxy builds its target
 * (server/proxy/routes.ts upstreamTarget): `/api/* -> http://127.0.0.1:3000/*, prefix stripped`, or
 * `.../api/*, prefix kept` with stripPrefix false; a rewrite is named after it.
 */
export function proxyMapping(p: ProxyRoute): string {
  const prefix = p.prefix.replace(/\/+$/, '');
  const kept = p.stripPrefix ? '' : prefix;
  const targets = (Array.isArray(p.upstream) ? p.upstream : [p.upstream]).map((u) => {
    const url = new URL(u);
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}${kept}/*`;
  });
  const how = prefix === '' ? '' : p.stripPrefix ? ', prefix stripped' : ', prefix kept';
  const rewrite = p.rewrite === undefined ? '' : `, then rewritten ${p.rewrite.from} -> ${p.rewrite.to}`;
  return `${prefix}/* -> ${targets.join(', ')}${how}${rewrite}`;
}

export function startupLines(c: GatehouseConfig, facts: StartupFacts): Startup {
  const lines = [
    facts.configFile === undefined ? 'config: none (flags and defaults)' : `config ${facts.configFile}`,
    `root ${c.root}`,
  ];
  for (const p of c.proxy) {
    const cache = p.cache?.enabled === true ? ` (cache: ${p.cache.store ?? 'memory'})` : '';
    lines.push(`proxy ${proxyMapping(p)}${cache}`);
  }
  for (const w of c.websocket) {
    const fanout =
      'fanout' in w && w.fanout !== undefined && w.fanout !== 'local' ? `, fanout ${w.fanout}` : '';
    lines.push(`websocket ${w.path} (${w.mode}${fanout})`);
  }
  const warnings: string[] = [];
  // A proxy on / answers everything: the root is then never read.
  if (c.proxy.some((p) => p.prefix === '/')) return { lines, warnings };
  if (facts.rootEntries === 0) warnings.push(`the root ${c.root} is empty: every static request gets 404`);
  else if (c.static.spa && !facts.fallbackExists)
    warnings.push(
      `--spa is on but ${c.static.spaFallback} is not in the root ${c.root}: navigations get 404`,
    );
  return { lines, warnings };
}
