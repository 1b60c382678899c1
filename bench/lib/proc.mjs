// Child-process plumbing for the benchmark: CPU pinning with taskset, a registry of every child we start
// (so all of them die on exit, Ctrl-C or errors), readiness detection and a graceful-then-forceful stop.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every child process started by the harness that has not exited yet. */
const live = new Set();

export const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
export const cpuCount = availableParallelism();
/** Server on CPU 0, load generator on CPU 1 (only when there are at least two CPUs and taskset exists). */
export const CPU =
  cpuCount >= 2 && hasTaskset ? { server: 0, load: 1 } : { server: undefined, load: undefined };

/** Wraps a command in `taskset -c CPU` so that, after exec, the child's pid is the real program's pid. */
export function pinned(cpu, cmd, args) {
  return cpu === undefined ? [cmd, args] : ['taskset', ['-c', String(cpu), cmd, ...args]];
}

/** spawn() that remembers the child until it exits. */
export function spawnTracked(cmd, args, options = {}) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  child.once('error', () => live.delete(child));
  return child;
}

/** Synchronous clean-up steps (temp dirs) to run at exit even if nobody stopped things properly. */
const exitHooks = new Set();
export function atExit(fn) {
  exitHooks.add(fn);
  return () => exitHooks.delete(fn);
}

/**
 * A fresh temp dir (os.tmpdir()/<prefix>XXXXXX) that is removed by `remove()` (safe to call twice) or, failing
 * that, when the harness exits.
 */
export function tempDir(prefix) {
  const path = mkdtempSync(join(tmpdir(), prefix));
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    forget();
    rmSync(path, { recursive: true, force: true });
  };
  const forget = atExit(remove);
  return { path, remove };
}

/** Runs `start()`; `cleanup()` runs after the returned handle's `stop()`, or at once when `start()` fails. */
export async function withCleanup(start, cleanup) {
  let handle;
  try {
    handle = await start();
  } catch (err) {
    cleanup();
    throw err;
  }
  return {
    ...handle,
    async stop() {
      await handle.stop();
      cleanup();
    },
  };
}

/** Last-resort synchronous cleanup for process 'exit': SIGKILL whatever is still running, run exit hooks. */
export function killAllSync() {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
  for (const fn of exitHooks) {
    try {
      fn();
    } catch {}
  }
  exitHooks.clear();
}

/** SIGTERM everything still running, then SIGKILL what has not exited after `graceMs`. */
export async function stopAll(graceMs = 2000) {
  await Promise.all([...live].map((child) => stopChild(child, graceMs)));
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

export async function stopChild(child, graceMs = 3000) {
  if (exited(child)) return;
  const done = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (!exited(child)) child.kill('SIGKILL');
  }, graceMs);
  await done;
  clearTimeout(timer);
}

/** A currently free TCP port on 127.0.0.1 (for servers that cannot be told to use port 0). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Keeps the last lines of a stream for error messages. */
function tail(stream, max = 20) {
  const lines = [];
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop();
    for (const line of parts) {
      lines.push(line);
      if (lines.length > max) lines.shift();
    }
  });
  return () => [...lines, partial].filter((l) => l.trim() !== '').join('\n');
}

/** /proc facts about a pid: the program name and the CPUs it may run on. */
export function procInfo(pid) {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const cpus = /^Cpus_allowed_list:\s*(.+)$/m.exec(status)?.[1];
    return { comm, cpus };
  } catch {
    return undefined;
  }
}

/**
 * Starts a server process pinned to the server CPU and waits until it is ready: either a stdout/stderr line
 * matching `readyLine` (its first capture group, if any, is the port) or, with `port`, an accepted TCP
 * connection. Rejects (after killing the child) when it exits early or is not ready within `timeoutMs`.
 * @returns {Promise<{ pid: number, port: number, child: import('node:child_process').ChildProcess,
 *   stop: () => Promise<void>, logs: () => string }>}
 */
export async function startServerProcess({
  cmd,
  args,
  cwd,
  env,
  readyLine,
  port,
  timeoutMs = 15000,
  expectComm,
  cpus = CPU.server,
}) {
  // `cpus`: a taskset list; the server CPU unless a server needs more (gatehouse-workers2: both).
  const [file, argv] = pinned(cpus, cmd, args);
  const child = spawnTracked(file, argv, { cwd, env: { ...process.env, ...env } });
  const stdoutTail = tail(child.stdout);
  const stderrTail = tail(child.stderr);
  const logs = () => [stdoutTail(), stderrTail()].filter(Boolean).join('\n');
  const stop = () => stopChild(child);

  let settled = false;
  const ready = new Promise((resolve, reject) => {
    const finish = (err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(() => finish(new Error(`not ready after ${timeoutMs} ms`)), timeoutMs);
    let poll;
    child.once('error', (err) => finish(err));
    child.once('exit', (code, signal) =>
      finish(new Error(`exited (${signal ?? `code ${code}`}) before ready`)),
    );
    if (readyLine) {
      let buffered = '';
      const onData = (chunk) => {
        buffered += chunk;
        const match = readyLine.exec(buffered);
        if (match) finish(null, match[1] ? Number(match[1]) : port);
        if (buffered.length > 65536) buffered = buffered.slice(-4096);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
    } else {
      poll = setInterval(async () => {
        if (!settled && (await canConnect(port))) finish(null, port);
      }, 50);
    }
  });

  let readyPort;
  try {
    readyPort = await ready;
  } catch (err) {
    await stop();
    const log = logs();
    throw new Error(`${err.message}${log ? `\n${log}` : ''}`);
  }
  // The pid must be the server itself (taskset exec()s it), or RSS samples would measure taskset.
  const info = procInfo(child.pid);
  // Node 24 names its main thread (the process's comm) 'MainThread'; taskset would show as 'taskset'.
  const comms = expectComm === 'node' ? ['node', 'MainThread'] : [expectComm];
  if (expectComm && info && !comms.some((c) => info.comm.startsWith(c))) {
    await stop();
    throw new Error(`pid ${child.pid} is '${info.comm}', expected '${expectComm}'`);
  }
  return { pid: child.pid, port: readyPort, child, stop, logs, cpus: info?.cpus };
}
