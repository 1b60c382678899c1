// Headers that policy steps (CORS, header rules) add to whatever response follows, without
// res.setHeader: any setHeader before writeHead sends Node down its slow header path (~1.5 µs a
// request). The headers wait on the response and are merged in when the head is written, by
// whichever writer writes it (writeHead, or end() and its implicit head).
import type { OutFieldValue, ResponseSink } from './exchange.js';
import { mergeVary } from './vary.js';

interface Pending {
  /** [lowercase name, value, weak]: a weak header yields to the handler's own value. */
  readonly pairs: [string, string | string[], boolean][];
  vary: string | undefined;
  /** The writeHead the response had before this one replaced it. */
  readonly writeHead: WriteHead;
}

type Fields = Record<string, OutFieldValue | undefined>;

const PENDING = Symbol('gatehouse.pendingHeaders');
type Decorated = ResponseSink & { [PENDING]?: Pending };

/** Adds a header to the coming response head; it wins over the handler's value for the same name. */
export function addResponseHeader(res: ResponseSink, name: string, value: string | string[]): void {
  pending(res).pairs.push([name.toLowerCase(), value, false]);
}

/** Adds a header to the coming response head unless the handler sends that header itself. */
export function addDefaultHeader(res: ResponseSink, name: string, value: string | string[]): void {
  pending(res).pairs.push([name.toLowerCase(), value, true]);
}

/** Adds names to the coming response's Vary (merged, never replaced; RFC 9110 §12.5.5). */
export function addResponseVary(res: ResponseSink, names: string): void {
  const p = pending(res);
  p.vary = p.vary === undefined ? names : mergeVary(p.vary, names);
}

/**
 * The pending list of a response. Only responses that get policy headers are touched: their
 * writeHead is replaced by one that folds the list in. (A ResponseSink subclass for every
 * response cost ~2 us a request on the plain static path; measured side by side.)
 */
function pending(res: ResponseSink): Pending {
  const r = res as Decorated;
  let p = r[PENDING];
  if (p === undefined) {
    // The response's own writeHead (node:http's, or the HTTP/2 compatibility one) is kept and called.
    p = r[PENDING] = { pairs: [], vary: undefined, writeHead: res.writeHead as unknown as WriteHead };
    const q = p;
    // biome-ignore lint/suspicious/noExplicitAny: Node's writeHead overloads
    res.writeHead = function (this: ResponseSink, status: number, a?: any, b?: any) {
      return writeHeadWithPending.call(this, q, status, a, b);
    } as ResponseSink['writeHead'];
  }
  return p;
}

type WriteHead = (this: ResponseSink, ...args: unknown[]) => ResponseSink;

function writeHeadWithPending(
  this: ResponseSink,
  p: Pending,
  status: number,
  reasonOrHeaders?: string | Fields | unknown[],
  maybeHeaders?: Fields | unknown[],
): ResponseSink {
  const proto = p.writeHead;
  const hasReason = typeof reasonOrHeaders === 'string';
  const write = (headers?: Fields | unknown[]) =>
    hasReason ? proto.call(this, status, reasonOrHeaders, headers) : proto.call(this, status, headers);
  const raw = (typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders) as
    | Fields
    | unknown[]
    | undefined;
  // A header list (the proxy cache's hit path) is merged like an object: ours win, Vary is merged.
  const given = Array.isArray(raw) ? listToObject(raw) : raw;
  // The flat-list merge below tracks pairs in a 31-bit mask; more pairs take this path too.
  if (p.pairs.length > 30 || this.getHeaderNames().length > 0) {
    // Mixed with setHeader: fold the handler's object in, then ours, Vary merged.
    if (given !== undefined) {
      for (const k in given) {
        const v = given[k];
        if (v === undefined) continue;
        if (k.toLowerCase() === 'vary') this.setHeader('vary', mergeVary(this.getHeader('vary'), String(v)));
        else this.setHeader(k, v);
      }
    }
    applyPending(this, p);
    return write();
  }
  // Fast path: one flat [name, value, ...] list for Node's writeHead, no object cloned.
  const pairs = p.pairs;
  const n = pairs.length;
  const out: unknown[] = [];
  let handlerWins = 0; // bit i: the handler sends pairs[i]'s header and pairs[i] is weak
  let varyBefore: unknown;
  if (given !== undefined) {
    for (const k in given) {
      const v = given[k];
      if (v === undefined) continue;
      const len = k.length;
      if (p.vary !== undefined && len === 4 && k.toLowerCase() === 'vary') {
        varyBefore = v;
        continue;
      }
      let take = true;
      for (let i = 0; i < n; i++) {
        const pair = pairs[i]!;
        if (pair[0].length !== len || k.toLowerCase() !== pair[0]) continue;
        if (pair[2]) handlerWins |= 1 << i;
        else take = false;
      }
      if (take) out.push(k, v);
    }
  }
  for (let i = 0; i < n; i++) {
    const pair = pairs[i]!;
    if ((handlerWins & (1 << i)) === 0) out.push(pair[0], pair[1]);
  }
  if (p.vary !== undefined) out.push('vary', mergeVary(varyBefore as string | undefined, p.vary));
  return write(out);
}

/** Node's header list forms ([name, value, ...] or [[name, value], ...]) as an object; a repeated name's values become one array. */
function listToObject(list: readonly unknown[]): Fields {
  const out: Record<string, string | string[]> = {};
  const add = (name: unknown, value: unknown) => {
    const k = String(name).toLowerCase();
    const v = Array.isArray(value) ? value.map(String) : String(value);
    const had = out[k];
    out[k] = had === undefined ? v : ([] as string[]).concat(had, v);
  };
  if (Array.isArray(list[0])) for (const pair of list as unknown[][]) add(pair[0], pair[1]);
  else for (let i = 0; i + 1 < list.length; i += 2) add(list[i], list[i + 1]);
  return out;
}

function applyPending(res: ResponseSink, p: Pending): void {
  for (const [name, value, weak] of p.pairs) if (!weak || !res.hasHeader(name)) res.setHeader(name, value);
  if (p.vary !== undefined) res.setHeader('vary', mergeVary(res.getHeader('vary'), p.vary));
}

/**
 * Every field the steps put on `res` so far (set and pending, pending folded in as writeHead would),
 * for a head that another writer writes on the socket (a WebSocket 101: ws's, or an upstream's).
 */
export function responseFields(res: ResponseSink): [string, string | number | string[]][] {
  const p = (res as Decorated)[PENDING];
  if (p !== undefined) {
    applyPending(res, p);
    p.pairs.length = 0;
    p.vary = undefined;
  }
  const out: [string, string | number | string[]][] = [];
  for (const name of res.getHeaderNames()) {
    const v = res.getHeader(name);
    if (v !== undefined) out.push([name, v]);
  }
  return out;
}
