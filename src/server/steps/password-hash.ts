// Password hashes for Basic authentication: scrypt (RFC 7914) in a self-describing string
// (`scrypt$N$r$p$<salt base64>$<hash base64>`), made by `gatehouse hash-password`, checked when the
// auth rules load and verified by the auth step.
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { normalizePassword } from '../../http/basic-auth.js';

export interface ScryptHash {
  readonly N: number;
  readonly r: number;
  readonly p: number;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

/** Defaults for new hashes: OWASP's scrypt equivalent of N=2^17,r=8,p=1 with 32 MiB instead of 128. */
export const SCRYPT_DEFAULTS = { N: 2 ** 15, r: 8, p: 3 } as const;
/** Least work accepted (N*r*p): weaker hashes are refused at load, as plaintext is. */
export const SCRYPT_MIN_WORK = 2 ** 17;
const SCRYPT_MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const HASH_FORMAT =
  'expected a scrypt hash scrypt$N$r$p$<salt base64>$<hash base64> (run gatehouse hash-password)';

/** Parses `scrypt$N$r$p$<salt b64>$<hash b64>`; a string explains what is wrong (never echoing it). */
export function parseScryptHash(s: string): ScryptHash | string {
  const parts = s.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return `not a password hash: ${HASH_FORMAT}`;
  const [, nText, rText, pText, saltText, hashText] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (![nText, rText, pText].every((t) => /^[1-9]\d{0,9}$/.test(t)))
    return `bad scrypt parameters: ${HASH_FORMAT}`;
  const N = Number(nText);
  const r = Number(rText);
  const p = Number(pText);
  if (N < 2 || (N & (N - 1)) !== 0) return 'scrypt N must be a power of two';
  if (N * r * p < SCRYPT_MIN_WORK) return `scrypt cost too low: N*r*p must be at least ${SCRYPT_MIN_WORK}`;
  if (128 * N * r > SCRYPT_MAX_MEMORY_BYTES || p > 16)
    return 'scrypt parameters need too much memory or time';
  if (!BASE64.test(saltText) || !BASE64.test(hashText)) return `salt and hash must be base64: ${HASH_FORMAT}`;
  const salt = Buffer.from(saltText, 'base64');
  const hash = Buffer.from(hashText, 'base64');
  if (salt.length < 8) return 'scrypt salt must be at least 8 bytes';
  if (hash.length < 16 || hash.length > 128) return 'scrypt hash must be 16 to 128 bytes';
  return { N, r, p, salt, hash };
}

function derive(
  password: string,
  salt: Buffer,
  keylen: number,
  N: number,
  r: number,
  p: number,
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** Hashes a password (normalised per RFC 7617 §2.1 first) into the stored format. */
export async function hashPassword(
  password: string,
  params: { N?: number; r?: number; p?: number } = {},
): Promise<string> {
  const { N = SCRYPT_DEFAULTS.N, r = SCRYPT_DEFAULTS.r, p = SCRYPT_DEFAULTS.p } = params;
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(normalizePassword(password), salt, KEY_BYTES, N, r, p);
  const out = `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
  const check = parseScryptHash(out);
  if (typeof check === 'string') throw new RangeError(check);
  return out;
}

/** Verifies a (normalised) password against a parsed hash in constant time for its length. */
export async function verifyPassword(password: string, h: ScryptHash): Promise<boolean> {
  const key = await derive(password, h.salt, h.hash.length, h.N, h.r, h.p);
  return timingSafeEqual(key, h.hash);
}
