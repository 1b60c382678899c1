// Command-line options of scripts/conformance/run.mjs, parsed without side effects so they can be
// tested (test/conformance/options.test.mjs). parseOptions returns a discriminated union:
//   { kind: 'ok', options } | { kind: 'help' } | { kind: 'usage', message }
import path from 'node:path';
import { parseArgs } from 'node:util';

/** Options that only make sense with a proxy in the middle. */
const PROXY_ONLY = ['cache', 'keep-alive', 'proxy-port', 'via', 'gatehouse-config'];

/** Which copy of the suite runs: the npm release, or the git HEAD vendored in test/fixtures. */
export const SUITES = ['npm', 'head'];
/** What serves the proxy route: `gatehouse serve`, or the gatehouse-http/express middleware in Express. */
export const VIAS = ['cli', 'express', 'bun', 'deno'];

function intOption(name, value, min, max) {
  if (value === undefined) return { ok: true, value: undefined };
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max || String(value).trim() === '') {
    return { ok: false, message: `--${name}: expected an integer ${min}..${max}, got '${value}'` };
  }
  return { ok: true, value: n };
}

/**
 * @param {string[]} argv  the arguments after the script name
 * @param {Record<string, string | undefined>} env  process.env (GATEHOUSE_CONFORMANCE_TIMEOUT, _CONFIG)
 * @param {string} cwd  --adapter, --out and --gatehouse are resolved against it
 */
export function parseOptions(argv, env = {}, cwd = process.cwd()) {
  let values;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        private: { type: 'boolean', default: false },
        adapter: { type: 'string' },
        cache: { type: 'boolean', default: false },
        store: { type: 'string' },
        suite: { type: 'string' },
        via: { type: 'string' },
        'list-failing': { type: 'boolean', default: false },
        json: { type: 'string' },
        out: { type: 'string' },
        'floor-required': { type: 'string' },
        'floor-optimal': { type: 'string' },
        id: { type: 'string' },
        'keep-alive': { type: 'boolean', default: false },
        'origin-port': { type: 'string' },
        'proxy-port': { type: 'string' },
        timeout: { type: 'string' },
        gatehouse: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (err) {
    return { kind: 'usage', message: err.message };
  }
  if (values.help) return { kind: 'help' };

  const mode = values.private ? 'private' : 'proxy';
  if (mode === 'private') {
    // GATEHOUSE_CONFORMANCE_CONFIG configures the proxy route; it would be silently ignored here.
    const given = PROXY_ONLY.filter((k) =>
      k === 'gatehouse-config'
        ? env.GATEHOUSE_CONFORMANCE_CONFIG
        : values[k] !== undefined && values[k] !== false,
    );
    if (values.store !== undefined) given.push('store');
    if (given.length) {
      const names = given.map((k) => (k === 'gatehouse-config' ? 'GATEHOUSE_CONFORMANCE_CONFIG' : `--${k}`));
      return { kind: 'usage', message: `${names.join(', ')}: not with --private (no proxy is involved)` };
    }
  } else if (values.adapter !== undefined) {
    return { kind: 'usage', message: '--adapter: only with --private' };
  }

  const store = values.store ?? 'memory';
  if (!['memory', 'disk', 'redis'].includes(store)) {
    return { kind: 'usage', message: `--store: expected memory, disk or redis, got '${store}'` };
  }
  const suite = values.suite ?? 'npm';
  if (!SUITES.includes(suite)) {
    return { kind: 'usage', message: `--suite: expected npm or head, got '${suite}'` };
  }
  const via = values.via ?? 'cli';
  if (!VIAS.includes(via)) {
    return { kind: 'usage', message: `--via: expected cli, express, bun or deno, got '${via}'` };
  }
  const ints = {
    floorRequired: intOption('floor-required', values['floor-required'], 0, 10_000),
    floorOptimal: intOption('floor-optimal', values['floor-optimal'], 0, 10_000),
    originPort: intOption('origin-port', values['origin-port'], 1, 65535),
    proxyPort: intOption('proxy-port', values['proxy-port'], 1, 65535),
    timeoutSec: intOption('timeout', values.timeout ?? env.GATEHOUSE_CONFORMANCE_TIMEOUT ?? '900', 1, 86_400),
  };
  for (const r of Object.values(ints)) if (!r.ok) return { kind: 'usage', message: r.message };

  const resolve = (p) => (p === undefined ? undefined : path.resolve(cwd, p));
  return {
    kind: 'ok',
    options: {
      mode,
      adapter: resolve(values.adapter),
      cache: values.cache,
      store,
      suite,
      via,
      listFailing: values['list-failing'],
      json: resolve(values.json),
      out: resolve(values.out),
      id: values.id,
      keepAlive: values['keep-alive'],
      gatehouse: resolve(values.gatehouse),
      floorRequired: ints.floorRequired.value,
      floorOptimal: ints.floorOptimal.value,
      originPort: ints.originPort.value,
      proxyPort: ints.proxyPort.value,
      timeoutSec: ints.timeoutSec.value,
    },
  };
}
