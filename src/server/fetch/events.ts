// The part of node:events a FetchRequest and a FetchSink need (on, once, off, emit), without
// EventEmitter's per-object set-up: one request and one response are made per exchange, and most
// are never listened to. The listeners' table is made at the first `on`.

// biome-ignore lint/suspicious/noExplicitAny: listeners take what their event passes
type Listener = (...args: any[]) => void;

/** A `once` wrapper remembers what it wraps, so `off(event, original)` removes it. */
type Wrapped = Listener & { readonly listener?: Listener };

export class Events {
  #listeners: Map<string | symbol, Wrapped[]> | undefined;

  on(event: string | symbol, listener: Listener): this {
    const table = (this.#listeners ??= new Map());
    const list = table.get(event);
    if (list === undefined) table.set(event, [listener]);
    else list.push(listener);
    return this;
  }

  addListener(event: string | symbol, listener: Listener): this {
    return this.on(event, listener);
  }

  once(event: string | symbol, listener: Listener): this {
    const wrapped: Wrapped = Object.assign(
      (...args: unknown[]) => {
        this.off(event, wrapped);
        listener.apply(this, args);
      },
      { listener },
    );
    return this.on(event, wrapped);
  }

  off(event: string | symbol, listener: Listener): this {
    const list = this.#listeners?.get(event);
    if (list === undefined) return this;
    // The last one added first, as node:events removes it.
    for (let i = list.length - 1; i >= 0; i--) {
      const l = list[i]!;
      if (l === listener || l.listener === listener) {
        list.splice(i, 1);
        break;
      }
    }
    return this;
  }

  removeListener(event: string | symbol, listener: Listener): this {
    return this.off(event, listener);
  }

  listenerCount(event: string | symbol): number {
    return this.#listeners?.get(event)?.length ?? 0;
  }

  /** Calls the listeners in order; an 'error' nobody listens to is thrown, as node:events does. */
  emit(event: string | symbol, ...args: unknown[]): boolean {
    const list = this.#listeners?.get(event);
    if (list === undefined || list.length === 0) {
      if (event === 'error') throw args[0];
      return false;
    }
    if (list.length === 1) list[0]!.apply(this, args);
    else for (const l of [...list]) l.apply(this, args);
    return true;
  }
}
