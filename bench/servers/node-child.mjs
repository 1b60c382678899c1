// Helper for peers that run as `node bench/children/<file>` child processes pinned to the server CPU.
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '../lib/proc.mjs';

const READY = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

/** Starts bench/children/<file> serving `dir` on a port it picks itself and reports; `env` is added. */
export function startNodeChild(file, dir, env = {}) {
  const script = fileURLToPath(new URL(`../children/${file}`, import.meta.url));
  return startServerProcess({
    cmd: process.execPath,
    args: [script, dir],
    env: { NODE_ENV: 'production', ...env },
    readyLine: READY,
    expectComm: 'node',
  });
}
