// Issuing X.509 certificates (RFC 5280) with @peculiar/x509 over WebCrypto: the local development CA,
// its localhost leaf, and the test PKI. Keys are PKCS#8 PEM ("BEGIN PRIVATE KEY"), signatures SHA-256.
import { createPrivateKey, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

/** A certificate and its private key, both PEM. */
export interface IssuedPem {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  /** SANs: DNS names and IP literals (v4/v6), told apart by the module. */
  hosts?: readonly string[];
  notBefore: Date;
  notAfter: Date;
  /** A CA certificate (basicConstraints cA, keyCertSign). */
  isCa?: boolean;
  /** With isCa: the basicConstraints pathLenConstraint (RFC 5280 §4.2.1.9); absent = unlimited. */
  pathLength?: number;
  /** Signed by this CA; absent = self-signed. */
  issuer?: IssuedPem;
  /** Default 'P-256' (ECDSA); 'RSA-2048' for tests of key description. */
  keyType?: 'P-256' | 'RSA-2048';
}

type KeyType = NonNullable<IssueOptions['keyType']>;

const cryptoImpl = webcrypto as unknown as Crypto;

const ALGORITHMS: Record<KeyType, RsaHashedKeyGenParams | EcKeyGenParams> = {
  'P-256': { name: 'ECDSA', namedCurve: 'P-256' },
  'RSA-2048': {
    name: 'RSASSA-PKCS1-v1_5',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: 'SHA-256',
  },
};

/** The signature algorithm for a key (RFC 5758 §3.2 ecdsa-with-SHA256, RFC 4055 sha256WithRSAEncryption). */
function signingAlgorithm(keyType: KeyType): Algorithm | EcdsaParams {
  return keyType === 'P-256' ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'RSASSA-PKCS1-v1_5' };
}

/** The key type of a PKCS#8 PEM key, so an issuer's key is imported with the right algorithm. */
function keyTypeOf(keyPem: string): KeyType {
  const key = createPrivateKey(keyPem);
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return 'P-256';
  }
  if (key.asymmetricKeyType === 'rsa') return 'RSA-2048';
  throw new Error(`unsupported issuer key type ${key.asymmetricKeyType ?? 'unknown'}`);
}

/** A random 16-byte positive serial (RFC 5280 §4.1.2.2: positive, at most 20 octets, unpredictable). */
function randomSerialHex(): string {
  const bytes = cryptoImpl.getRandomValues(new Uint8Array(16));
  // High bit clear keeps it positive; a non-zero first byte keeps DER from trimming it shorter.
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

/** SAN entries (RFC 5280 §4.2.1.6): IP literals as iPAddress, anything else as dNSName. */
function generalNames(hosts: readonly string[]): x509.JsonGeneralNames {
  return hosts.map((h) => {
    const bare = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
    return isIP(bare) !== 0 ? { type: 'ip', value: bare } : { type: 'dns', value: h };
  });
}

async function importSigningKey(keyPem: string): Promise<CryptoKey> {
  const keyType = keyTypeOf(keyPem);
  const der = x509.PemConverter.decodeFirst(keyPem);
  const alg = ALGORITHMS[keyType];
  const params = alg.name === 'ECDSA' ? alg : { name: alg.name, hash: 'SHA-256' };
  return cryptoImpl.subtle.importKey('pkcs8', der, params, false, ['sign']);
}

function extensionsFor(o: IssueOptions, keyType: KeyType): x509.Extension[] {
  const F = x509.KeyUsageFlags;
  if (o.isCa === true) {
    return [
      new x509.BasicConstraintsExtension(true, o.pathLength, true),
      new x509.KeyUsagesExtension(F.keyCertSign | F.cRLSign | F.digitalSignature, true),
    ];
  }
  // RSA key exchange (TLS 1.2 RSA suites) needs keyEncipherment; ECDSA signs only.
  const usages = keyType === 'RSA-2048' ? F.digitalSignature | F.keyEncipherment : F.digitalSignature;
  const exts: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(usages, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
  ];
  const hosts = o.hosts ?? [];
  if (hosts.length > 0) exts.push(new x509.SubjectAlternativeNameExtension(generalNames(hosts), false));
  return exts;
}

/** Issues a certificate: self-signed, or signed by `o.issuer`. */
export async function issueCertificate(o: IssueOptions): Promise<IssuedPem> {
  const keyType: KeyType = o.keyType ?? 'P-256';
  const keys = (await cryptoImpl.subtle.generateKey(ALGORITHMS[keyType], true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const subject: x509.JsonName = [{ CN: [o.commonName] }];
  const extensions = extensionsFor(o, keyType);
  extensions.push(await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, cryptoImpl));

  let cert: x509.X509Certificate;
  if (o.issuer === undefined) {
    extensions.push(await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey, false, cryptoImpl));
    cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: randomSerialHex(),
        subject,
        issuer: subject,
        notBefore: o.notBefore,
        notAfter: o.notAfter,
        publicKey: keys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: signingAlgorithm(keyType),
        extensions,
      },
      cryptoImpl,
    );
  } else {
    const issuerCert = new x509.X509Certificate(o.issuer.certPem);
    const issuerKeyType = keyTypeOf(o.issuer.keyPem);
    // RFC 5280 §4.2.1.1: the AKI carries the issuer's subjectKeyIdentifier.
    const issuerSki = issuerCert.getExtension(x509.SubjectKeyIdentifierExtension);
    extensions.push(
      issuerSki !== null
        ? new x509.AuthorityKeyIdentifierExtension(issuerSki.keyId, false)
        : await x509.AuthorityKeyIdentifierExtension.create(issuerCert.publicKey, false, cryptoImpl),
    );
    cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: randomSerialHex(),
        subject,
        issuer: issuerCert.subjectName,
        notBefore: o.notBefore,
        notAfter: o.notAfter,
        publicKey: keys.publicKey,
        signingKey: await importSigningKey(o.issuer.keyPem),
        signingAlgorithm: signingAlgorithm(issuerKeyType),
        extensions,
      },
      cryptoImpl,
    );
  }
  const pkcs8 = await cryptoImpl.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    certPem: `${cert.toString('pem')}\n`,
    keyPem: `${x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n`,
  };
}
