// The server: node:http plus the handlers, listening and graceful drain.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERRORS, sendError } from './errors.js';
import { accessLogger, createLogger, type Logger } from './log.js';
import type { ServerOptions } from './options.js';
import { createStaticHandler, type StaticHandler } from './static/handler.js';

export interface Gatehouse {
  readonly server: Server;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly static: StaticHandler;
  /** Starts listening; resolves with the URL it listens on. */
  listen(): Promise<{ url: string; host: string; port: number }>;
  /** Stops accepting, lets in-flight requests finish (up to shutdownTimeoutMs), then closes. */
  close(): Promise<void>;
}

export function createGatehouse(options: ServerOptions, deps: { logger?: Logger } = {}): Gatehouse {
  const logger = deps.logger ?? createLogger(options.log);
  const limits = options.limits;
  const staticHandler = createStaticHandler({
    root: options.root,
    static: options.static,
    cachePolicy: options.cachePolicy,
    onError: (err, req) => logger.error({ err, method: req.method, url: req.url }, 'request failed'),
  });
  const logAccess = accessLogger(logger);
  let closing = false;

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (logAccess) logAccess(req, res);
    if (closing) res.setHeader('Connection', 'close');
    const url = req.url!;
    // RFC 9110 §15.5.15: 414 for a target longer than we are willing to interpret.
    if (url.length > limits.maxUrlBytes) {
      sendError(
        req,
        res,
        ERRORS.uriTooLong,
        `The request target is longer than ${limits.maxUrlBytes} bytes.`,
      );
      return;
    }
    try {
      staticHandler(req, res);
    } catch (err) {
      logger.error({ err, method: req.method, url }, 'request failed');
      sendError(req, res, ERRORS.internal);
    }
  };

  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    },
    onRequest,
  );

  return {
    server,
    options,
    logger,
    static: staticHandler,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.listen.port, options.listen.host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve({ url: `http://${host}:${a.port}`, host: a.address, port: a.port });
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        if (!server.listening) return resolve();
        const timer = setTimeout(() => server.closeAllConnections(), limits.shutdownTimeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          logger.flush?.();
          resolve();
        });
        server.closeIdleConnections();
        // Connections that finish a response while draining close instead of idling.
        server.on('request', (_req, res: ServerResponse) =>
          res.on('finish', () => server.closeIdleConnections()),
        );
      }),
  };
}
