// What `gatehouse serve` tells at start (issue 26 §2), before its `listening on` line: the config file in
// use (one in the working folder is applied silently otherwise), the root, one line per proxy prefix and
// WebSocket path (as Caddy prints its sites), and warnings for a setup that can only answer 404.
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

export function startupLines(c: GatehouseConfig, facts: StartupFacts): Startup {
  const lines = [
    facts.configFile === undefined ? 'config: none (flags and defaults)' : `config ${facts.configFile}`,
    `root ${c.root}`,
  ];
  for (const p of c.proxy) {
    const upstreams = Array.isArray(p.upstream) ? p.upstream.join(', ') : p.upstream;
    const cache = p.cache?.enabled === true ? ` (cache: ${p.cache.store ?? 'memory'})` : '';
    lines.push(`proxy ${p.prefix} -> ${upstreams}${cache}`);
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
