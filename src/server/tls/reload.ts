// Certificate reloads, shared by the Node TLS listener (listener.ts) and the Bun.serve host
// (app/native.ts): the files' folders are watched, and a reload either applies every new pair or
// none (a bad file is logged with its name and the certificates in use stay).
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from '../ops/log.js';
import { CertificateError, type CertificateStore } from './certificates.js';

/**
 * Re-reads the store, then `apply` puts the new pairs in service; a refused pair (or a failed
 * apply) is logged and the ones in use stay. Resolves with the reason, or undefined once applied.
 */
export async function reloadCertificates(
  store: CertificateStore,
  logger: Logger,
  apply: () => void | Promise<void>,
): Promise<string | undefined> {
  try {
    await store.reload();
    await apply();
    logger.info({ files: store.files }, 'tls: certificates loaded');
    return undefined;
  } catch (err) {
    const file = err instanceof CertificateError ? err.source : undefined;
    const reason = (err as Error).message;
    logger.error({ file, reason }, 'tls: certificates refused, the ones in use stay');
    return reason;
  }
}

/** Debounce for file events: a renewal writes the cert and the key one after the other. */
const WATCH_SETTLE_MS = 200;

/**
 * Watches the folders of `files` (a renewal often renames a new file into place, which a watch on
 * the file itself would miss) and calls `reload` once the events settle.
 */
export function watchFiles(files: readonly string[], reload: () => Promise<unknown>): FSWatcher[] {
  const byDir = new Map<string, Set<string>>();
  for (const f of files) {
    const names = byDir.get(dirname(f)) ?? new Set<string>();
    names.add(basename(f));
    byDir.set(dirname(f), names);
  }
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), WATCH_SETTLE_MS);
    timer.unref();
  };
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || names.has(String(name))) schedule();
      });
      w.on('error', () => w.close());
      watchers.push(w);
    } catch {
      // A folder that cannot be watched: SIGHUP still reloads.
    }
  }
  return watchers;
}
