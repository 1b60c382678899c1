// Child process of `run.mjs --via express` (issue 28): the runner's proxy route served by an Express 5 app
// whose only middleware is gatehouse-http/express, in place of `gatehouse serve`.
//
//   node express-app.mjs GATEHOUSE_DIR CONFIG_FILE SITE_DIR PORT
//
// The config is the file `gatehouse serve --config CONFIG_FILE SITE_DIR --log off` reads, with the same
// root and log setting the CLI's flags add, so both modes run one config. The app is a default
// `express()` (its own X-Powered-By and all), mounted with `app.use(gh)` and `gh.attach(server)`, as
// docs/embedding.md shows. The route's prefix is `/`, so Gatehouse claims every request; anything it
// passed on gets a 500 naming it, which the suite then counts as a failure.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import express from 'express';

const [gatehouseDir, configFile, siteDir, port] = process.argv.slice(2);
if (port === undefined) {
  console.error('usage: node express-app.mjs GATEHOUSE_DIR CONFIG_FILE SITE_DIR PORT');
  process.exit(2);
}
const { gatehouse } = await import(
  pathToFileURL(path.join(gatehouseDir, 'dist', 'adapters', 'express.js')).href
);

const config = JSON.parse(readFileSync(configFile, 'utf8'));
const gh = gatehouse({ ...config, root: siteDir, log: { format: 'off' } });
await gh.ready();

const expressVersion = createRequire(import.meta.url)('express/package.json').version;
const app = express();
app.use(gh);
app.use((req, res) => {
  res.status(500).type('text/plain').send(`passed on by Gatehouse: ${req.method} ${req.url}\n`);
});
const server = gh.attach(createServer(app));
// PORT 0: a free one; the line says which.
server.listen(Number(port), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port} (express ${expressVersion})`);
});

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, async () => {
    if (closing) return;
    closing = true;
    server.close();
    server.closeIdleConnections();
    await gh.close();
    process.exit(0);
  });
}
