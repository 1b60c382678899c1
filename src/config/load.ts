// Loads, merges and validates configuration: file < CLI flags, one schema for both.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import type { ServerOptions, TlsOptions } from '../server/index.js';
import { locateJsonError } from './json-error.js';
import { configSchema, type GatehouseConfig, type GatehouseConfigInput } from './schema.js';
import { closestName, keysAt } from './suggest.js';
import { tlsPaths } from './tls.js';

export const CONFIG_FILE = 'gatehouse.config.json';

/** Bad configuration: the message names the key path (exit code 2 in the CLI). */
export class ConfigError extends Error {
  readonly code = 'bad_config';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** `a.b[0].c`; a key the path could not show (empty, or holding `.`, `[`, `]`, `"`, controls) is quoted: `a["x.y"]`. */
function keyPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else if (p === '' || /[.[\]"\u0000-\u001f\u007f]/.test(String(p))) s += `[${JSON.stringify(String(p))}]`;
    else s += s ? `.${String(p)}` : String(p);
  }
  return s;
}

/** Control characters (a value quoted in a reason, a regex in an error) escaped: one issue, one line. */
function oneLine(s: string): string {
  return s.replace(
    /[\u0000-\u001f\u007f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Formats zod issues as `key.path: reason` lines; with the schema, an unknown key names the known one
 * it most likely meant: `unknown key static.spaa (did you mean static.spa?)`.
 */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  source: string,
  schema?: z.ZodType,
): string {
  return issues
    .map((i) => {
      if (i.code === 'unrecognized_keys') {
        const known = schema === undefined ? [] : keysAt(schema, i.path);
        return i.keys
          .map((k) => {
            const near = closestName(k, known);
            const hint = near === undefined ? '' : ` (did you mean ${keyPath([...i.path, near])}?)`;
            return `${source}: unknown key ${keyPath([...i.path, k])}${hint}`;
          })
          .join('\n');
      }
      return `${source}: ${keyPath(i.path) || '(top level)'}: ${oneLine(i.message)}`;
    })
    .join('\n');
}

/** Validates input and fills in defaults. Throws ConfigError naming the key. */
export function parseConfig(input: unknown, source = 'config'): GatehouseConfig {
  const r = configSchema.safeParse(input);
  if (!r.success) throw new ConfigError(formatIssues(r.error.issues, source, configSchema));
  const c = r.data;
  if (c.static.spa && !c.static.spaFallback.startsWith('/')) {
    throw new ConfigError(`${source}: static.spaFallback: must start with /`);
  }
  // A cache in Redis needs the top-level Redis server.
  for (const [i, route] of c.proxy.entries()) {
    if (route.cache?.store === 'redis' && c.redis === undefined && route.cache.redis === undefined) {
      throw new ConfigError(`${source}: proxy[${i}].cache.store: "redis" needs the top-level redis.url`);
    }
  }
  // RFC 8555 §8.3: HTTP-01 is answered on the plain-HTTP listener; without one no order can succeed.
  if (c.tls?.acme !== undefined && c.listen.httpPort === undefined) {
    throw new ConfigError(
      `${source}: tls.acme: needs listen.httpPort (the HTTP-01 challenge is answered there; 80 in production)`,
    );
  }
  // A feature set to Redis needs the shared connection.
  if (
    c.limits.rateLimit?.store === 'redis' &&
    c.redis === undefined &&
    c.limits.rateLimit.redis === undefined
  ) {
    throw new ConfigError(`${source}: limits.rateLimit.store: "redis" needs the top-level redis.url`);
  }
  for (const [i, e] of c.websocket.entries()) {
    if (e.fanout === 'redis' && c.redis === undefined && e.redis === undefined) {
      throw new ConfigError(`${source}: websocket[${i}].fanout: "redis" needs the top-level redis.url`);
    }
  }
  const tickets = c.tls?.sessionTickets;
  if (tickets?.store === 'redis' && c.redis === undefined && tickets.redis === undefined) {
    throw new ConfigError(`${source}: tls.sessionTickets.store: "redis" needs the top-level redis.url`);
  }
  // tls.watch left to its default: Deno.serve, which cannot reload, then serves without (app/native.ts).
  if (c.tls !== undefined && !(isObject(input) && isObject(input.tls) && input.tls.watch !== undefined))
    (c.tls as TlsOptions).watchDefaulted = true;
  if (c.health?.requireRedis === true && c.redis === undefined) {
    throw new ConfigError(`${source}: health.requireRedis: true needs the top-level redis.url`);
  }
  for (const [i, rule] of c.cachePolicy.entries()) {
    if (
      rule.glob === undefined &&
      rule.regex === undefined &&
      rule.contentType === undefined &&
      rule.hashed === undefined
    ) {
      throw new ConfigError(`${source}: cachePolicy[${i}]: a rule needs glob, regex, contentType or hashed`);
    }
    if (rule.regex !== undefined) {
      try {
        new RegExp(rule.regex);
      } catch (err) {
        throw new ConfigError(`${source}: cachePolicy[${i}].regex: ${oneLine((err as Error).message)}`);
      }
    }
  }
  return c;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge of plain objects; arrays and scalars from `over` replace those in `base`. */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = mergeConfig(base[k], v);
  return out;
}

export interface LoadedConfig {
  readonly config: GatehouseConfig;
  /** The config file that was read, if any. */
  readonly file: string | undefined;
  /** Folder that relative paths in the config are resolved against. */
  readonly baseDir: string;
}

/**
 * Reads `configPath` (or gatehouse.config.json in `cwd` when present), merges `overrides`
 * (CLI flags) on top, validates. Relative `root` in the file is relative to the file;
 * a root given in `overrides` is relative to `cwd`.
 */
export function loadConfig(o: {
  cwd: string;
  configPath?: string | undefined;
  overrides?: GatehouseConfigInput;
}): LoadedConfig {
  let file: string | undefined;
  let fromFile: unknown = {};
  if (o.configPath !== undefined) file = resolve(o.cwd, o.configPath);
  else if (existsSync(resolve(o.cwd, CONFIG_FILE))) file = resolve(o.cwd, CONFIG_FILE);
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    // RFC 8259 §8.1: a byte order mark some editors write is ignored.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    try {
      fromFile = JSON.parse(text);
    } catch (err) {
      const at = locateJsonError(text);
      throw new ConfigError(
        at === undefined
          ? `${file}: invalid JSON: ${oneLine((err as Error).message)}`
          : `${file}: invalid JSON at line ${at.line}, column ${at.column}: ${at.reason}`,
      );
    }
    if (!isObject(fromFile)) throw new ConfigError(`${file}: the config must be a JSON object`);
    // Validate the file alone first so its errors name the file.
    parseConfig(fromFile, file);
    const fileDir = dirname(file);
    if (typeof fromFile.root === 'string') fromFile = { ...fromFile, root: resolve(fileDir, fromFile.root) };
    else fromFile = { ...fromFile, root: fileDir };
    // tls paths are relative to the file too (the file was validated above, so the shape holds).
    const fileTls = (fromFile as GatehouseConfigInput).tls;
    if (fileTls !== undefined)
      fromFile = { ...(fromFile as object), tls: tlsPaths(fileTls, (p) => resolve(fileDir, p)) };
  }
  const overrides = o.overrides ?? {};
  const merged = mergeConfig(fromFile, {
    ...overrides,
    ...(overrides.root !== undefined ? { root: resolve(o.cwd, overrides.root) } : {}),
    ...(overrides.tls !== undefined ? { tls: tlsPaths(overrides.tls, (p) => resolve(o.cwd, p)) } : {}),
  });
  const config = parseConfig(merged, 'flags');
  return {
    config: { ...config, root: resolve(o.cwd, config.root) },
    file,
    baseDir: file ? dirname(file) : o.cwd,
  };
}

/** The options the server runs on. */
export function toServerOptions(c: GatehouseConfig): ServerOptions {
  const { $schema: _s, ...rest } = c;
  return rest;
}
