// Debian's pebble (an ACME test server, RFC 8555) and pebble-challtestsrv as its DNS, started by a test
// on free loopback ports with a config in a temp folder, and stopped (kill + wait) after it. Pebble's
// own HTTPS uses a throwaway certificate made here; `directoryCa` is that certificate, to trust for the
// ACME client only. Certificates pebble issues chain to its per-run root (`rootPem()`).
import { type ChildProcess, spawn } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { type AcmeChallenges, answerAcmeChallenge } from '../../src/server/tls/acme-challenge.js';
import { WAIT_DEADLINE_MS } from './wait.js';

export const PEBBLE_BIN = process.env.PEBBLE_BIN ?? '/usr/bin/pebble';
export const CHALLTESTSRV_BIN = process.env.CHALLTESTSRV_BIN ?? '/usr/bin/pebble-challtestsrv';

export interface Pebble {
  /** The ACME directory URL (https://127.0.0.1:PORT/dir). */
  directory: string;
  /** Path of the PEM file that pebble's HTTPS certificate chains to (tls.acme.directoryCa). */
  directoryCa: string;
  /** The same, as PEM text. */
  directoryCaPem: string;
  /** The port pebble validates HTTP-01 challenges on (every name resolves to 127.0.0.1). */
  httpPort: number;
  /** Pebble's per-run root certificate (GET /roots/0 on the management port). */
  rootPem(): Promise<string>;
  /** Everything pebble and challtestsrv printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

export interface PebbleOptions {
  /** The HTTP-01 port pebble validates against; default a free port. */
  httpPort?: number;
  /** Lifetime of issued certificates in seconds (pebble's certificateValidityPeriod). */
  certificateValiditySec?: number;
}

/** A free TCP port on 127.0.0.1 (bound, then released for the child to take). */
export async function freeTcpPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, '127.0.0.1', resolve);
  });
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.bind(0, '127.0.0.1', () => resolve());
  });
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A self-signed ECDSA P-256 certificate for 127.0.0.1 and localhost (pebble's own HTTPS). */
async function selfSigned(): Promise<{ certPem: string; keyPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const nowMs = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: 'CN=gatehouse test pebble',
      notBefore: new Date(nowMs - 60_000),
      notAfter: new Date(nowMs + 24 * 3600_000),
      keys,
      signingAlgorithm: alg,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.SubjectAlternativeNameExtension([
          { type: 'ip', value: '127.0.0.1' },
          { type: 'dns', value: 'localhost' },
        ]),
      ],
    },
    webcrypto as Crypto,
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .replace(/.{64}/g, '$&\n')
    .replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
  return { certPem: cert.toString('pem'), keyPem };
}

function getText(url: string, ca?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? httpsRequest : httpRequest)(url, { ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitForAnswer(what: string, url: string, ca: string | undefined, dead: () => string) {
  const deadline = Date.now() + WAIT_DEADLINE_MS;
  for (;;) {
    const early = dead();
    if (early) throw new Error(`${what} exited before answering: ${early}`);
    try {
      const r = await getText(url, ca);
      if (r.status > 0) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer at ${url} in time`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function run(bin: string, args: string[], env: Record<string, string>, log: string[]): ChildProcess {
  const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer) => {
    log.push(b.toString());
    if (log.length > 400) log.splice(0, log.length - 400);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Starts challtestsrv (DNS: every name is 127.0.0.1) and pebble; waits until both answer. */
export async function startPebble(o: PebbleOptions = {}): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pebble-'));
  const { certPem, keyPem } = await selfSigned();
  writeFileSync(join(dir, 'cert.pem'), certPem);
  writeFileSync(join(dir, 'key.pem'), keyPem, { mode: 0o600 });
  const [acmePort, mgmtPort, tlsPort, dnsPort, challMgmtPort] = [
    await freeTcpPort(),
    await freeTcpPort(),
    await freeTcpPort(),
    await freeUdpPort(),
    await freeTcpPort(),
  ];
  const httpPort = o.httpPort ?? (await freeTcpPort());
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: join(dir, 'cert.pem'),
      privateKey: join(dir, 'key.pem'),
      httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      ...(o.certificateValiditySec === undefined
        ? {}
        : { certificateValidityPeriod: o.certificateValiditySec }),
    },
  };
  writeFileSync(join(dir, 'pebble-config.json'), JSON.stringify(config));
  const log: string[] = [];
  const chall = run(
    CHALLTESTSRV_BIN,
    [
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-management',
      `127.0.0.1:${challMgmtPort}`,
    ],
    {},
    log,
  );
  const pebble = run(
    PEBBLE_BIN,
    ['-config', join(dir, 'pebble-config.json'), '-dnsserver', `127.0.0.1:${dnsPort}`, '-strict=false'],
    // No sleeps before validation, no rejected nonces, no reused authorizations (each order proves
    // control again: a renewal really answers a new challenge).
    { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    log,
  );
  const stop = async () => {
    await Promise.all([stopChild(pebble), stopChild(chall)]);
    rmSync(dir, { recursive: true, force: true });
  };
  const exited = (c: ChildProcess) => () =>
    c.exitCode !== null || c.signalCode !== null ? `exit ${c.exitCode ?? c.signalCode}: ${log.join('')}` : '';
  try {
    await waitForAnswer(
      'pebble-challtestsrv',
      `http://127.0.0.1:${challMgmtPort}/`,
      undefined,
      exited(chall),
    );
    const directory = `https://127.0.0.1:${acmePort}/dir`;
    await waitForAnswer('pebble', directory, certPem, exited(pebble));
    return {
      directory,
      directoryCa: join(dir, 'cert.pem'),
      directoryCaPem: certPem,
      httpPort,
      async rootPem() {
        const r = await getText(`https://127.0.0.1:${mgmtPort}/roots/0`, certPem);
        if (r.status !== 200) throw new Error(`pebble /roots/0 answered ${r.status}`);
        return r.text;
      },
      output: () => log.join(''),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface ChallengeResponder {
  port: number;
  /** The challenge tables consulted, in order (a manager's `challenges`). */
  tables: Set<AcmeChallenges>;
  /** When set, answers every request instead of the tables (a broken or hostile HTTP-01 port). */
  override: ((path: string) => { status: number; body: string }) | undefined;
  /** Paths requested so far (what pebble's validation asked for). */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A plain node:http server on 127.0.0.1:`port` answering HTTP-01 through `answerAcmeChallenge`, the
 * way the plain-HTTP listener does (until the server's own listener is used end to end).
 */
export async function startChallengeResponder(port: number): Promise<ChallengeResponder> {
  const r: ChallengeResponder = {
    port,
    tables: new Set(),
    override: undefined,
    requests: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createHttpServer((req, res) => {
    const path = req.url ?? '/';
    r.requests.push(path);
    if (r.override) {
      const o = r.override(path);
      res.writeHead(o.status, { 'content-type': 'text/plain' }).end(o.body);
      return;
    }
    let a = answerAcmeChallenge({ get: () => undefined }, req.method ?? 'GET', path);
    for (const t of r.tables) {
      a = answerAcmeChallenge(t, req.method ?? 'GET', path);
      if (a?.status === 200) break;
    }
    if (a === undefined) res.writeHead(404).end();
    else if (a.status === 200) res.writeHead(200, { 'content-type': a.contentType }).end(a.body);
    else if (a.status === 405) res.writeHead(405, { allow: a.allow }).end();
    else res.writeHead(404).end();
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const close = r.close;
  r.close = () => {
    server.closeAllConnections();
    return close();
  };
  return r;
}
