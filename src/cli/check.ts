// gatehouse check URL: requests the site, runs the inspector's checks, prints the report.
//   gatehouse check https://staging.example/ --origin https://app.example --json

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { forTerminal, jsonForTerminal } from '../http/terminal.js';
import { CheckUsageError, inspectSite, noFinalResponse, unreachableReason } from '../inspect/index.js';
import type { CheckOptions } from '../inspect/live.js';
import { checkOptions } from '../inspect/live.js';
import { renderJson, renderText } from '../inspect/report.js';
import { type FlagTable, parseFlags } from './args.js';
import { type CommandIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

export interface CheckIo extends CommandIo {
  /** Colour when true (a TTY without NO_COLOR); --no-color turns it off. */
  readonly color?: boolean;
  /** Tests shorten the pause before the repeat request. */
  readonly repeatDelayMs?: number;
  /** Where the development CA is looked for (tests; default devDataDir()). */
  readonly dataDir?: string;
}

const USAGE = `Usage: gatehouse check URL [--origin ORIGIN] [--method M] [--header 'Name: value']... [--jsonp NAME]
                      [--json] [--verbose] [--no-color] [--timeout MS] [--insecure] [--ca FILE] [--allow-private]
Requests URL (following redirects), then sends probes to the final URL (conditional, range,
content-coding, CORS and JSONP requests) and reports what it finds about redirects, protocol and TLS,
caching, validators, content coding, CORS, JSONP and security headers, with the RFC section of each.
URL without a scheme is taken as http:// (as curl does): check 127.0.0.1:8080 checks http://127.0.0.1:8080/.
  --origin ORIGIN   also send CORS requests (simple, a random origin, a preflight) from ORIGIN
  --method M        the method of the first request to the final URL (default GET)
  --header 'N: v'   send this header (repeatable); only to the origin of URL, never across a redirect
  --jsonp NAME      the JSONP callback parameter (callback, cb and jsonp are found in URL by themselves)
  --json            print the report as one JSON object (with what passed and every request sent)
  --verbose         also list what passed (304s, ranges, compression, the asset probes)
  --no-color        no colour (also NO_COLOR=1; colour is only used on a terminal)
  --timeout MS      give up on each request after MS milliseconds (default 10000)
  --insecure        do not verify the certificate (still checked and reported)
  --ca FILE         also trust the CA certificates in this PEM file
  --allow-private   follow redirects from a public address to a loopback, private or link-local one
                    (refused by default, as from one of those kinds to another: URL's own kind is fine)
The final status is shown: 5xx is an error, 4xx a warning.
Exit: 0 no errors, 1 an error was found or the site cannot be reached, 2 bad usage.
`;

class UsageError extends Error {}

interface Parsed {
  url: string;
  options: CheckOptions;
  json: boolean;
  verbose: boolean;
  noColor: boolean;
  help: boolean;
}

/** `127.0.0.1:8080`, `localhost:3000/app`, `example.com`: no scheme given means http (as curl). */
export function withDefaultScheme(arg: string): string {
  if (arg === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return arg;
  const url = `http://${arg}`;
  try {
    return new URL(url).href;
  } catch {
    return arg;
  }
}

function parseHeader(raw: string): [string, string] {
  const colon = raw.indexOf(':');
  if (colon <= 0) throw new UsageError(`--header: expected 'Name: value', got ${JSON.stringify(raw)}`);
  return [raw.slice(0, colon).trim(), raw.slice(colon + 1).trim()];
}

async function parse(args: string[], cwd: string): Promise<Parsed> {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseFlags(args, CHECK_FLAGS, true) as {
      values: Record<string, string | boolean | string[] | undefined>;
      positionals: string[];
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const help = values.help === true;
  if (positionals.length > 1) throw new UsageError(`one URL, got: ${positionals.join(' ')}`);
  const url = withDefaultScheme(positionals[0] ?? '');
  if (url === '' && !help) throw new UsageError('expected a URL');
  const options: CheckOptions = {};
  if (typeof values.origin === 'string') options.origin = values.origin;
  if (typeof values.method === 'string') options.method = values.method;
  if (Array.isArray(values.header)) options.headers = values.header.map(parseHeader);
  if (typeof values.jsonp === 'string') options.jsonp = values.jsonp;
  if (typeof values.timeout === 'string') {
    if (!/^\d{1,9}$/.test(values.timeout) || Number(values.timeout) < 1) {
      throw new UsageError(`--timeout: expected milliseconds >= 1, got ${values.timeout}`);
    }
    options.timeoutMs = Number(values.timeout);
  }
  if (values.insecure === true) options.insecure = true;
  if (values['allow-private'] === true) options.allowPrivate = true;
  if (typeof values.ca === 'string') {
    try {
      options.ca = await readFile(resolve(cwd, values.ca), 'utf8');
    } catch (err) {
      throw new UsageError(
        `--ca: cannot read ${values.ca} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  if (!help) {
    try {
      checkOptions(url, options);
    } catch (err) {
      if (err instanceof CheckUsageError) throw new UsageError(err.message);
      throw err;
    }
  }
  const json = values.json === true;
  return { url, options, json, verbose: values.verbose === true, noColor: values['no-color'] === true, help };
}

/** Runs the command; resolves with the exit code. */
export async function checkCommand(args: string[], io: CheckIo): Promise<number> {
  let p: Parsed;
  try {
    p = await parse(args, io.cwd);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`gatehouse check: ${forTerminal(err.message)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (p.help) {
    io.stdout.write(USAGE);
    return EXIT_OK;
  }
  const options: CheckOptions = {
    ...p.options,
    ...(io.repeatDelayMs === undefined ? {} : { repeatDelayMs: io.repeatDelayMs }),
    ...(io.dataDir === undefined ? {} : { dataDir: io.dataDir }),
  };
  const { recording, report } = await inspectSite(p.url, options);
  const unreachable = unreachableReason(recording);
  if (unreachable !== undefined) {
    if (p.json) {
      io.stdout.write(`${jsonForTerminal({ url: recording.url, status: null, error: unreachable })}\n`);
    }
    io.stderr.write(`gatehouse check: cannot reach ${forTerminal(unreachable)}\n`);
    return EXIT_FAILURE;
  }
  const color = io.color === true && !p.noColor;
  io.stdout.write(p.json ? renderJson(report) : renderText(report, { color, verbose: p.verbose }));
  const noFinal = noFinalResponse(recording);
  if (noFinal !== undefined) {
    io.stderr.write(`gatehouse check: no final response: ${forTerminal(noFinal)}\n`);
    return EXIT_FAILURE;
  }
  return report.summary.errors > 0 ? EXIT_FAILURE : EXIT_OK;
}

/** The flags of `check` (checked against --help and the README: test/cli/help.test.ts). */
export const CHECK_FLAGS = {
  origin: { type: 'string' },
  method: { type: 'string' },
  header: { type: 'string', multiple: true },
  jsonp: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  timeout: { type: 'string' },
  insecure: { type: 'boolean' },
  ca: { type: 'string' },
  'allow-private': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;
