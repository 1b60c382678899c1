// The names a user lists for the development certificate (`serve --https --name N`, `tls.names`), as
// `mkcert NAME...` takes them: DNS names, `*.` wildcards of one label, IPv4 and IPv6 addresses. Checked
// when the config loads; put on the leaf's subjectAltName beside localhost, 127.0.0.1 and ::1.
import { isIP } from 'node:net';

/** RFC 1035 §2.3.1 label (letters, digits, inner hyphens; 63 octets at most), read case-insensitively. */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
/** RFC 1035 §2.3.4: 255 octets on the wire, 253 characters written out. */
const MAX_NAME = 253;

/** Why `name` cannot go on the certificate, or undefined when it can. */
export function devNameProblem(name: string): string | undefined {
  if (name === '') return 'empty name';
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  // RFC 5280 §4.2.1.6: an iPAddress is 4 or 16 octets; a zone identifier has no place in it.
  if (bare.includes('%')) return 'an IPv6 zone (%...) cannot be on a certificate';
  if (isIP(bare) !== 0) return undefined;
  if (bare !== name) return 'not an IPv6 address';
  if (name.length > MAX_NAME) return `longer than ${MAX_NAME} characters`;
  if (name.endsWith('.')) return 'write it without the trailing dot';
  const labels = name.split('.');
  // RFC 6125 §6.4.3: a wildcard is the whole left-most label and stands for exactly one label.
  const first = labels[0] === '*' ? 1 : 0;
  if (first === 1 && labels.length < 2) return 'a wildcard needs a name after it (*.test)';
  for (const label of labels.slice(first)) {
    if (label.includes('*')) return 'a wildcard is the whole first label only (*.test)';
    if (!LABEL.test(label)) return 'not a host name (letters, digits and inner hyphens, dot-separated)';
  }
  // RFC 1123 §2.1: a top-level label is never all digits, so this was meant as an IPv4 address.
  if (/^\d+$/.test(labels.at(-1) ?? '')) return 'not an IPv4 address';
  return undefined;
}

/**
 * A name the certificate may carry but clients will not match: RFC 6125 §7.2 leaves wildcards right
 * under a top-level name to the client, and Chromium, Firefox and OpenSSL refuse them (`*.test`).
 */
export function devNameWarning(name: string): string | undefined {
  if (name.startsWith('*.') && name.split('.').length === 2)
    return `--name ${name}: browsers and OpenSSL match no wildcard right under a top-level name; list the names (myapp.test) or use *.myapp.test`;
  return undefined;
}

/**
 * The form a name has on the certificate and in comparisons: DNS names in lower case (RFC 4343),
 * IPv6 compressed (RFC 5952) without brackets, IPv4 as written (isIP accepts only dotted decimal).
 */
export function normalizeDevName(name: string): string {
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(bare) === 6) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  return bare.toLowerCase();
}
