// What the bench scripts share: their log line, their numbers from the environment, and a lifetime in
// which nothing they start outlives them (servers, child processes, the fixture), however the run ends.
import { killAllSync, stopAll } from './proc.mjs';

export const log = (msg) => process.stderr.write(`${msg}\n`);

/** A positive whole number from the environment (`fallback` when unset); anything else exits 2. */
export function positiveInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    log(`bench: ${name} must be a positive integer, got '${raw}'`);
    process.exit(2);
  }
  return n;
}

/**
 * Runs `main`, then stops everything and exits: on success (exit code 0 or process.exitCode), on a
 * failure or crash (1), on Ctrl-C, SIGTERM and SIGHUP. `stop()` stops what the script started (its
 * servers), `cleanup()` removes its files (synchronous: it runs at 'exit' too). A stop that hangs
 * is cut after 5 s by killing every child.
 */
let shuttingDown = false;

/** True once the run is stopping: loops that start servers or measurements end early. */
export const stopping = () => shuttingDown;

export function runToEnd(main, { stop, cleanup }) {
  const shutdown = async (code, reason) => {
    if (shuttingDown) return;
    shuttingDown = true;
    if (reason) log(`\nbench: ${reason}; stopping servers...`);
    const hardStop = setTimeout(() => {
      killAllSync();
      process.exit(code);
    }, 5000);
    await Promise.allSettled([stop()]);
    await stopAll(1000);
    cleanup();
    clearTimeout(hardStop);
    process.exit(code);
  };
  const crashed = (err) => {
    log(`bench: ${err?.stack ?? err}`);
    shutdown(1);
  };
  process.on('SIGINT', () => shutdown(130, 'interrupted'));
  process.on('SIGTERM', () => shutdown(143, 'terminated'));
  process.on('SIGHUP', () => shutdown(129, 'hang-up'));
  process.on('uncaughtException', crashed);
  process.on('unhandledRejection', crashed);
  process.on('exit', () => {
    killAllSync();
    cleanup();
  });
  main().then(() => shutdown(process.exitCode ?? 0), crashed);
}
