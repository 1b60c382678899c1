// A logger that keeps every line in memory, for tests that assert what was logged (and how often).
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import type { Logger } from '../../src/server/ops/log.js';

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  obj: Record<string, unknown>;
}

export interface MemoryLogger extends Logger {
  lines: LogLine[];
  /** The messages of `level` (or all) joined by newlines, for assertion messages. */
  text(level?: LogLine['level']): string;
}

export function memoryLogger(): MemoryLogger {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (obj: object | string, msg?: string): void => {
      if (typeof obj === 'string') lines.push({ level, msg: obj, obj: {} });
      else lines.push({ level, msg: msg ?? '', obj: obj as Record<string, unknown> });
    };
  return {
    lines,
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    isLevelEnabled: () => true,
    text: (level) =>
      lines
        .filter((l) => level === undefined || l.level === level)
        .map((l) => `${l.level}: ${l.msg}`)
        .join('\n'),
  };
}

/** A real Gatehouse on 127.0.0.1:0 whose log lines go to `logger` (the same config path as serve). */
export async function startLoggedApp(
  config: GatehouseConfigInput,
  logger: MemoryLogger,
): Promise<{ app: Gatehouse; url: string }> {
  const c = parseConfig({ log: { format: 'off' }, ...config, listen: { host: '127.0.0.1', port: 0 } });
  const app = createGatehouse(toServerOptions(c), { logger });
  return { app, url: (await app.listen()).url };
}
