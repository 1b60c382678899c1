// A body that arrives in chunks (a file, a byte range of one) written to a response sink, with
// backpressure: what stream.pipeline(source, res) did on Node, over any AsyncIterable (a Node
// Readable, a web ReadableStream, a generator) and any sink (exchange.ts).
import type { ResponseSink } from './exchange.js';

/** What writeBody uses of a sink. */
export type BodySink = Pick<ResponseSink, 'destroyed' | 'write' | 'end' | 'destroy' | 'on' | 'off'>;

const noop = () => {};

/**
 * Writes every chunk of `source` to `sink`, then ends the sink unless `end` is false (a multipart
 * body writes several parts, RFC 9110 §14.6). When write() returns false, the next chunk is read only
 * after 'drain'. Resolves true once the whole source was written; false when the client went away
 * first (the sink closed or was destroyed): the source is then stopped and released (its iterator's
 * return(): a file stream closes its file). A failing source destroys the sink, since a response
 * whose head went out cannot turn into an error, and the promise rejects with its error.
 */
export async function writeBody(
  sink: BodySink,
  source: AsyncIterable<Uint8Array>,
  end = true,
): Promise<boolean> {
  const it = source[Symbol.asyncIterator]();
  const w = new Watch(sink, it);
  sink.on('close', w.onClose);
  try {
    for (;;) {
      // Read even when the sink is gone already: a Node Readable's iterator takes hold of the stream
      // (and so can release it) only once started; a return() before that leaves the file open.
      const r = await it.next();
      if (w.gone || sink.destroyed) return w.stop();
      if (r.done === true) break;
      // Per chunk nothing is allocated unless the transport's buffer is full.
      if (!sink.write(r.value) && !(await w.drained())) return w.stop();
    }
  } catch (err) {
    // A source we released may end with an error of its own (a premature close): not a failure.
    if (w.gone) return false;
    w.release();
    sink.destroy(err instanceof Error ? err : undefined);
    throw err;
  } finally {
    w.detach();
  }
  if (end) sink.end();
  return true;
}

/** The sink's events for one writeBody: one 'close' listener, and one 'drain' listener once needed. */
class Watch {
  /** The sink closed before the body was written: the client is gone. */
  gone = false;
  #released = false;
  #draining = false;
  #wake: ((drained: boolean) => void) | undefined;

  constructor(
    private readonly sink: BodySink,
    private readonly it: AsyncIterator<Uint8Array>,
  ) {}

  readonly onClose = (): void => {
    this.gone = true;
    this.release();
    this.#resolve(false);
  };

  readonly onDrain = (): void => this.#resolve(true);

  #resolve(drained: boolean): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.(drained);
  }

  /** True after 'drain', false when the sink closed instead. */
  drained(): Promise<boolean> {
    if (!this.#draining) {
      this.#draining = true;
      this.sink.on('drain', this.onDrain);
    }
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  /** Stops the source (once); its pending read, if any, completes first. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.it.return?.().catch(noop);
  }

  /** The client is gone: release the source; writeBody resolves false. */
  stop(): false {
    this.gone = true;
    this.release();
    return false;
  }

  detach(): void {
    this.sink.off('close', this.onClose);
    if (this.#draining) this.sink.off('drain', this.onDrain);
  }
}
