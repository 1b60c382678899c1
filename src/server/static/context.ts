// What the static handler's parts share, built once by createStaticHandler (nothing per request).
import { formatHttpDate } from '../../http/dates.js';
import type { ExchangeRequest } from '../core/exchange.js';
import type { EarlyHints } from './early-hints.js';
import type { FileView, StaticOptions } from './files.js';

export interface StaticContext {
  readonly files: FileView;
  readonly opts: StaticOptions;
  readonly nowMs: () => number;
  /** Expires value for a max-age in seconds (see makeExpires). */
  readonly expires: (sec: number) => string;
  /** `/<assetsDir>/`: never an SPA navigation. */
  readonly assetsPrefix: string;
  /** static.spaRoutes compiled (globToRegExp): navigations that fall back whatever their last segment. */
  readonly spaRoutes: readonly RegExp[];
  readonly onError: (err: unknown, req: ExchangeRequest) => void;
  /** 103 Early Hints before HTML pages; undefined when static.earlyHints is off. */
  readonly earlyHints: EarlyHints | undefined;
}

/** Expires = now + max-age, formatted once per second per lifetime (RFC 9111 §5.3). */
export function makeExpires(nowMs: () => number): (sec: number) => string {
  let lastSecond = -1;
  const memo = new Map<number, string>();
  return (sec) => {
    const s = Math.floor(nowMs() / 1000);
    if (s !== lastSecond) {
      lastSecond = s;
      memo.clear();
    }
    let v = memo.get(sec);
    if (v === undefined) memo.set(sec, (v = formatHttpDate((s + sec) * 1000)));
    return v;
  };
}
