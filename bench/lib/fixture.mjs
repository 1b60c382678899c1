// The benchmark's own site: a temp dir with 1k.txt (1024 bytes), index.html (~2 KB) and a 150 KB hashed JS
// asset. Content is deterministic so every run serves the same bytes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const FIXTURE = {
  small: { path: '/1k.txt', size: 1024 },
  html: { path: '/index.html' },
  large: { path: '/assets/app-3f2a9c1b.js', size: 150 * 1024 },
};

function exactly(size, makeLine) {
  let text = '';
  for (let i = 0; text.length < size; i++) text += makeLine(i);
  return `${text.slice(0, size - 1)}\n`;
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Gatehouse benchmark fixture</title>
    <link rel="stylesheet" href="/assets/style-9d81c0aa.css">
    <script type="module" src="${FIXTURE.large.path}"></script>
  </head>
  <body>
    <main>
      <h1>Benchmark fixture</h1>
${Array.from(
  { length: 16 },
  (_, i) =>
    `      <p>Paragraph ${i + 1}: static files, validators and conditional requests are what this page is for.</p>`,
).join('\n')}
    </main>
  </body>
</html>
`;

/** Creates the fixture in os.tmpdir(); `cleanup()` removes it (safe to call twice). */
export function createFixture() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  writeFileSync(
    join(dir, '1k.txt'),
    exactly(FIXTURE.small.size, (i) => `line ${String(i).padStart(3, '0')}: gatehouse benchmark payload\n`),
  );
  writeFileSync(join(dir, 'index.html'), INDEX_HTML);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, FIXTURE.large.path.slice(1)),
    exactly(
      FIXTURE.large.size,
      (i) =>
        `export function handler${i}(request, options = {}) {\n` +
        `  const key = \`\${request.method}:\${request.url}:${i}\`;\n` +
        `  return options.cache?.get(key) ?? { status: 200, size: ${(i * 7919) % 65536} };\n}\n`,
    ),
  );
  let removed = false;
  return {
    dir,
    cleanup() {
      if (removed) return;
      removed = true;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
