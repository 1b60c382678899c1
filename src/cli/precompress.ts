// gatehouse precompress DIR: the command over the library in build/precompress.ts (which writes
// FILE.br and FILE.gz, and FILE.zst with --zstd, beside the compressible files of a build folder): its
// flags, the progress bar on a terminal, the dry-run lines and the summary.
import { stat } from 'node:fs/promises';
import {
  CODINGS,
  DEFAULT_MIN_BYTES,
  formatKB,
  formatSummary,
  type PrecompressOptions,
  precompressDir,
} from '../build/precompress.js';
import { forTerminal } from '../http/terminal.js';
import { MANIFEST_NAME, ZSTD_AVAILABLE } from '../server/index.js';
import { type FlagTable, parseFlags } from './args.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

const PROGRESS_BAR_WIDTH = 20;
const PROGRESS_REDRAW_MS = 100;

export interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface CommandIO {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
}

export const PRECOMPRESS_HELP = `Usage: gatehouse precompress DIR [options]

Writes FILE.br and FILE.gz (and FILE.zst with --zstd) beside each compressible file under DIR (text,
JS, CSS, JSON, SVG, XML, wasm, ttf/otf) for the static server to send. Siblings at least as new as their file are kept; a
sibling that would not be smaller than its file is not written. Dot folders other than .well-known
and symlinks are skipped. Each folder also gets a ${MANIFEST_NAME} with the content hash of its files
of 64 KiB and more, so the server sends their strong ETags from the first response.

Options:
  --min-bytes N   leave files smaller than N bytes alone (default ${DEFAULT_MIN_BYTES})
  --force         recompress even when the siblings are up to date
  --no-brotli     do not write .br files
  --no-gzip       do not write .gz files
  --zstd          also write .zst files (zstd level 19, RFC 8878; needs Node 22.15+)
  --dry-run       compress to measure, but write and delete nothing; list what would change
  --quiet         print errors only (no progress bar, no summary)
  -h, --help      this help
`;

interface ParsedArgs {
  readonly help: boolean;
  readonly quiet: boolean;
  readonly options: Omit<PrecompressOptions, 'dir'> & { readonly dir: string | undefined };
}

class PrecompressUsageError extends Error {}

/** The flags of `precompress` (checked against --help and the README: test/cli/help.test.ts). */
export const PRECOMPRESS_FLAGS = {
  'min-bytes': { type: 'string' },
  force: { type: 'boolean' },
  'no-brotli': { type: 'boolean' },
  'no-gzip': { type: 'boolean' },
  zstd: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

function parsePrecompressArgs(args: readonly string[]): ParsedArgs {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseFlags(args, PRECOMPRESS_FLAGS, true) as typeof parsed;
  } catch (err) {
    throw new PrecompressUsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  let minBytes = DEFAULT_MIN_BYTES;
  const min = values['min-bytes'];
  if (typeof min === 'string') {
    if (!/^\d+$/.test(min) || !Number.isSafeInteger(Number(min))) {
      throw new PrecompressUsageError(`--min-bytes: not a byte count: ${min}`);
    }
    minBytes = Number(min);
  }
  const help = values.help === true;
  if (!help) {
    if (positionals.length === 0) throw new PrecompressUsageError('missing DIR');
    if (positionals.length > 1)
      throw new PrecompressUsageError(`takes one DIR, got: ${positionals.join(' ')}`);
  }
  if (values.zstd === true && !ZSTD_AVAILABLE)
    throw new PrecompressUsageError(
      `--zstd needs Node 22.15 or later (node:zlib has no zstd in ${process.version})`,
    );
  const codings = CODINGS.filter((c) =>
    c === 'br'
      ? values['no-brotli'] !== true
      : c === 'gzip'
        ? values['no-gzip'] !== true
        : values.zstd === true,
  );
  if (!help && codings.length === 0)
    throw new PrecompressUsageError('--no-brotli with --no-gzip leaves nothing to do');
  return {
    help,
    quiet: values.quiet === true,
    options: {
      dir: positionals[0],
      minBytes,
      force: values.force === true,
      codings,
      dryRun: values['dry-run'] === true,
    },
  };
}

/** The `[#####.....] 12/40 assets/app.js` line on a terminal, redrawn in place. */
function progressLine(stream: OutputStream) {
  let drawn = false;
  let lastDrawMs = Number.NEGATIVE_INFINITY;
  return {
    update(done: number, total: number, rawPath: string): void {
      const path = forTerminal(rawPath);
      const nowMs = Date.now();
      if (nowMs - lastDrawMs < PROGRESS_REDRAW_MS) return;
      lastDrawMs = nowMs;
      const filled = total === 0 ? PROGRESS_BAR_WIDTH : Math.floor((done / total) * PROGRESS_BAR_WIDTH);
      const head = `[${'#'.repeat(filled)}${'.'.repeat(PROGRESS_BAR_WIDTH - filled)}] ${done}/${total} `;
      // A line that wraps cannot be redrawn with \r: keep it within the terminal, cutting the path's start.
      const room = (stream.columns || 80) - 1 - head.length;
      const shown = path.length <= room ? path : room > 1 ? `…${path.slice(path.length - room + 1)}` : '';
      stream.write(`\r${head}${shown}\x1b[K`);
      drawn = true;
    },
    clear(): void {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
      lastDrawMs = Number.NEGATIVE_INFINITY;
    },
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `gatehouse precompress DIR [options]`; resolves with the exit code (0 ok, 1 a file failed, 2 bad usage). */
export async function precompressCommand(
  args: string[],
  io: CommandIO = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let parsed: ParsedArgs;
  try {
    parsed = parsePrecompressArgs(args);
  } catch (err) {
    if (!(err instanceof PrecompressUsageError)) throw err;
    io.stderr.write(
      `gatehouse precompress: ${forTerminal(err.message)} (see gatehouse precompress --help)\n`,
    );
    return EXIT_USAGE;
  }
  if (parsed.help) {
    io.stdout.write(PRECOMPRESS_HELP);
    return EXIT_OK;
  }
  const dir = parsed.options.dir!;
  try {
    if (!(await stat(dir)).isDirectory()) {
      io.stderr.write(`gatehouse precompress: DIR is not a directory: ${forTerminal(dir)}\n`);
      return EXIT_USAGE;
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      io.stderr.write(`gatehouse precompress: DIR does not exist: ${forTerminal(dir)}\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`gatehouse precompress: ${forTerminal(`cannot read ${dir}: ${errorMessage(err)}`)}\n`);
    return EXIT_FAILURE;
  }

  const { quiet } = parsed;
  const opts: PrecompressOptions = { ...parsed.options, dir };
  const bar = !quiet && io.stderr.isTTY ? progressLine(io.stderr) : undefined;
  const report = await precompressDir(opts, {
    progress: bar && ((done, total, path) => bar.update(done, total, path)),
    action: (a) => {
      if (!opts.dryRun || quiet) return;
      bar?.clear();
      io.stdout.write(
        a.kind === 'write'
          ? `would write ${forTerminal(a.path)} (${formatKB(a.sizeBytes)})\n`
          : `would delete ${forTerminal(a.path)} (not smaller)\n`,
      );
    },
    error: (path, message) => {
      bar?.clear();
      io.stderr.write(`gatehouse precompress: ${forTerminal(`${path}: ${message}`)}\n`);
    },
  });
  bar?.clear();
  if (!quiet) io.stdout.write(`${formatSummary(report, opts.codings, opts.dryRun)}\n`);
  return report.failed > 0 ? EXIT_FAILURE : EXIT_OK;
}
