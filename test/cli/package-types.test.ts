// The package as a TypeScript user gets it (issue 12 §1): a file in a fresh app importing
// createServer from gatehouse-http type-checks with tsc, and wrong uses fail, so the check can fail.
// Its own file: tsc over @types/node takes seconds, and on Node 20 the runner's 60 s bounds a file.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type PackedApp, packAndInstall, REPO, run, SLOW_MS } from '../helpers/package.js';

describe('the package as a TypeScript user gets it', () => {
  let p: PackedApp;
  before(
    async () => {
      p = await packAndInstall();
    },
    { timeout: SLOW_MS },
  );
  after(() => p?.remove());

  test('importing createServer from gatehouse-http and the client from gatehouse-http/client type-checks with tsc; wrong uses do not', {
    timeout: SLOW_MS,
  }, async (t) => {
    writeFileSync(
      join(p.app, 'ok.ts'),
      `import { createServer, type Gatehouse, type GatehouseConfigInput, type WebSocketHandler } from 'gatehouse-http';
import { onMessageFrom, ReconnectingWebSocket } from 'gatehouse-http/client';

const config: GatehouseConfigInput = { root: 'site', static: { spa: true }, listen: { port: 0 } };
const app: Gatehouse = createServer(config);
const { url }: { url: string } = await app.listen();
console.log(url);
await app.close();
export const echo: WebSocketHandler = (socket) => socket.on('message', (data) => socket.send(data));
export const live = new ReconnectingWebSocket('ws://127.0.0.1:1/', undefined, { reconnectInterval: 1000 });
live.onmessage = (e) => console.log(e.data);
export const stop: () => void = onMessageFrom(['https://app.example'], (data, event) => console.log(data, event.origin));
`,
    );
    // Line 3: a number where the config object goes. Line 4: a bigint into ws's send, which only a
    // typed socket refuses: with @types/ws missing, the socket would be \`any\` and this would pass.
    writeFileSync(
      join(p.app, 'wrong.ts'),
      `import { createServer, type WebSocketHandler } from 'gatehouse-http';

createServer(8080);
export const bad: WebSocketHandler = (socket) => socket.send(42n);
`,
    );
    const compilerOptions = {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      strict: true,
      noEmit: true,
      // Our declarations are checked too: a type they import from a package the user does not get
      // (a devDependency) fails here, as it does for a user without skipLibCheck.
      skipLibCheck: false,
      types: ['node'],
    };
    writeFileSync(
      join(p.app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['ok.ts', 'wrong.ts'] }),
    );
    // One run (tsc takes seconds): every diagnostic is reported, so ok.ts type-checks when none names it.
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], p.app);
    t.diagnostic(`$ tsc -p tsconfig.json   # ok.ts, and wrong.ts\n${r.stdout.trim()}\n(exit ${r.status})`);
    const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    // Only the two wrong uses fail: not a missing module or missing types (TS2307, TS7016), nor
    // anything in ok.ts or in our declarations. TS2559: a number has nothing in common with the
    // all-optional config type.
    assert.equal(errors.length, 2, r.stdout + r.stderr);
    assert.match(errors[0]!, /^wrong\.ts\(3,14\): error TS(2559|2345): Type '8080' /);
    assert.match(errors[1]!, /^wrong\.ts\(4,\d+\): error TS2345: Argument of type 'bigint'/);
    assert.equal(r.status, 2);
  });
});
