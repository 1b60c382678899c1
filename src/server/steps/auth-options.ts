// The auth rules' options (the `auth` config section): the rule shape, its defaults and the checks the
// rules must pass, alone and together. Shared by the auth step and src/config/access.ts (through
// src/server/index.ts), so the config file and library callers refuse the same.
import { normalizeUserId } from '../../http/basic-auth.js';
import { parseIpRange } from '../../http/ip.js';
import type { RuleIssue } from './headers-options.js';
import { parseScryptHash } from './password-hash.js';

export interface BasicAuthOptions {
  /** The protection space shown by browsers (RFC 7617 §2); default "Gatehouse". */
  realm?: string | undefined;
  /** user-id -> scrypt hash (`scrypt$N$r$p$salt$hash`, from `gatehouse hash-password`). */
  users: Record<string, string>;
  /** Failed checks a client address (IPv6: its /64) may make per window before 429; default 10. */
  maxFailures?: number | undefined;
  /** The failure window, from the first failure; default 60. */
  failureWindowSec?: number | undefined;
}

export interface AuthRule {
  /** URL path prefix, matched by whole segments against the decoded path, ignoring case (`/admin`
   *  covers `/admin/x` and `/ADMIN/x`, not `/administrator`). */
  prefix: string;
  basic?: BasicAuthOptions | undefined;
  /** Client addresses, CIDRs or keywords (loopback, private, linklocal) allowed; others get 403. */
  allow?: string[] | undefined;
  /** Client addresses, CIDRs or keywords refused with 403; deny wins over allow. */
  deny?: string[] | undefined;
}

export const DEFAULT_REALM = 'Gatehouse';
/** A client address's failed password checks (BasicAuthOptions maxFailures, failureWindowSec). */
export const FAILURE_DEFAULTS = { maxFailures: 10, failureWindowSec: 60 } as const;

const CONTROL = /[\x00-\x1f\x7f]/;

/** Problems in one rule, paths relative to the rule (`['basic', 'users', 'alice']`). */
export function authRuleIssues(rule: AuthRule): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const p = rule.prefix;
  if (!p.startsWith('/')) issues.push({ path: ['prefix'], message: 'must start with /' });
  else if (/[?#%\\]|\0/.test(p) || /\/\.{1,2}(?:\/|$)/.test(p) || p.includes('//'))
    issues.push({
      path: ['prefix'],
      message: 'must be a plain decoded path (no ?, #, %, \\, //, . or .. segments)',
    });
  if (rule.basic === undefined && rule.allow === undefined && rule.deny === undefined)
    issues.push({ path: [], message: 'an auth rule needs basic, allow or deny' });
  if (rule.basic !== undefined) {
    const realm = rule.basic.realm;
    if (realm !== undefined) {
      if (realm === '' || realm.length > 256 || CONTROL.test(realm) || /[^\x00-\xff]/.test(realm))
        issues.push({
          path: ['basic', 'realm'],
          message: 'must be 1-256 Latin-1 characters without controls',
        });
    }
    const names = Object.keys(rule.basic.users);
    if (names.length === 0) issues.push({ path: ['basic', 'users'], message: 'needs at least one user' });
    const seen = new Set<string>();
    for (const name of names) {
      const at = ['basic', 'users', name];
      // RFC 7617 §2: a user-id containing a colon cannot be sent; no control characters.
      if (name === '' || name.includes(':') || CONTROL.test(name))
        issues.push({
          path: at,
          message: 'user-ids are non-empty, without ":" or control characters (RFC 7617 §2)',
        });
      const n = normalizeUserId(name);
      if (seen.has(n))
        issues.push({ path: at, message: 'the same user-id twice (after Unicode NFC normalisation)' });
      seen.add(n);
      const h = parseScryptHash(String(rule.basic.users[name]));
      if (typeof h === 'string') issues.push({ path: at, message: h });
    }
    for (const key of ['maxFailures', 'failureWindowSec'] as const) {
      const v = rule.basic[key];
      if (v !== undefined && !(Number.isInteger(v) && v >= 1 && v <= 86_400))
        issues.push({ path: ['basic', key], message: 'must be a whole number from 1 to 86400' });
    }
  }
  for (const list of ['allow', 'deny'] as const) {
    for (const [i, entry] of (rule[list] ?? []).entries()) {
      const r = parseIpRange(entry);
      if (r.kind === 'invalid') issues.push({ path: [list, i], message: r.reason });
    }
  }
  return issues;
}

/** Lowercased and without a trailing slash: prefixes match case-insensitively, so a case-insensitive
 *  filesystem (macOS, Windows) cannot serve /ADMIN/x from /admin/x past the rule. Over-matching only
 *  ever asks for credentials where none were needed. */
export function normalizePrefix(prefix: string): string {
  const p = prefix.toLowerCase();
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

/** Whether `path` is `prefix` or below it, by whole segments (both normalised). */
export function underPrefix(path: string, prefix: string): boolean {
  return (
    prefix === '/' || path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47)
  );
}

/** Problems across rules: each rule's own, plus a rule an earlier rule's prefix always wins over. */
export function authRulesIssues(rules: readonly AuthRule[]): RuleIssue[] {
  const issues: RuleIssue[] = [];
  for (const [i, rule] of rules.entries()) {
    for (const issue of authRuleIssues(rule))
      issues.push({ path: [i, ...issue.path], message: issue.message });
    for (let j = 0; j < i; j++) {
      if (underPrefix(normalizePrefix(rule.prefix), normalizePrefix(rules[j]!.prefix))) {
        issues.push({
          path: [i, 'prefix'],
          message: `never used: auth[${j}] (prefix ${rules[j]!.prefix}) matches first`,
        });
        break;
      }
    }
  }
  return issues;
}
