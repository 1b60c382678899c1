// A Cache API over Maps for tests without a browser (test/client/sw.test.ts, cache-api-tier.test.ts):
// entries keyed by absolute URL, GET only, bodies cloned in and out as the real one does.

/** A Cache over a Map keyed by URL (GET only, as the Cache API), recording the options of each match. */
export class FakeCache {
  readonly entries = new Map<string, Response>();
  readonly matchOptions: (CacheQueryOptions | undefined)[] = [];
  async match(req: RequestInfo | URL, options?: CacheQueryOptions): Promise<Response | undefined> {
    this.matchOptions.push(options);
    const r = typeof req === 'string' || req instanceof URL ? new Request(req) : req;
    if (r.method !== 'GET') return undefined;
    return this.entries.get(r.url)?.clone();
  }
  async put(req: RequestInfo | URL, res: Response): Promise<void> {
    const r = typeof req === 'string' || req instanceof URL ? new Request(req) : req;
    this.entries.set(r.url, res.clone());
  }
  async delete(req: RequestInfo | URL): Promise<boolean> {
    return this.entries.delete(typeof req === 'string' ? req : req instanceof URL ? req.href : req.url);
  }
  async keys(): Promise<Request[]> {
    return [...this.entries.keys()].map((u) => new Request(u));
  }
}

export class FakeCaches {
  readonly byName = new Map<string, FakeCache>();
  async open(name: string): Promise<FakeCache> {
    let c = this.byName.get(name);
    if (!c) this.byName.set(name, (c = new FakeCache()));
    return c;
  }
  async keys(): Promise<string[]> {
    return [...this.byName.keys()];
  }
  async delete(name: string): Promise<boolean> {
    return this.byName.delete(name);
  }
}
