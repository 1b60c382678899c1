import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { configSchema } from '../../src/config/schema.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const generatorPath = join(repoRoot, 'scripts/gen-schema.mjs');
const schemaPath = join(repoRoot, 'schema.json');

interface Generator {
  renderSchema(schema: unknown): string;
  SCHEMA_ID: string;
}

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: unknown;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  [key: string]: unknown;
};

const scratch: string[] = [];
after(() => Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true }))));

function generate(...args: string[]) {
  return spawnSync(process.execPath, [generatorPath, ...args], { cwd: repoRoot, encoding: 'utf8' });
}

async function committed(): Promise<JsonSchema> {
  return JSON.parse(await readFile(schemaPath, 'utf8')) as JsonSchema;
}

/** Every object schema in the tree, with its JSON pointer. */
function objectSchemas(schema: JsonSchema, pointer = ''): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = schema.type === 'object' ? [[pointer || '/', schema]] : [];
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    out.push(...objectSchemas(sub, `${pointer}/properties/${key}`));
  }
  if (schema.items) out.push(...objectSchemas(schema.items, `${pointer}/items`));
  schema.anyOf?.forEach((sub, i) => {
    out.push(...objectSchemas(sub, `${pointer}/anyOf/${i}`));
  });
  return out;
}

describe('schema.json', () => {
  test('the committed file is what the generator makes from the current configSchema', async () => {
    // Non-literal specifier: the generator is plain JS without type declarations.
    const generator = (await import(pathToFileURL(generatorPath).href)) as Generator;
    assert.equal(
      await readFile(schemaPath, 'utf8'),
      generator.renderSchema(configSchema),
      'schema.json is out of date: run npm run schema',
    );
  });

  test('gen-schema --check exits 0 when current, 1 when the file differs or is missing', async () => {
    const ok = generate('--check');
    assert.equal(ok.status, 0, ok.stderr);
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-schema-'));
    scratch.push(dir);
    const copy = join(dir, 'schema.json');
    const tampered = (await readFile(schemaPath, 'utf8')).replace('"root"', '"rootDir"');
    await writeFile(copy, tampered);
    const stale = generate('--check', '--out', copy);
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /out of date; run npm run schema/);
    assert.equal(await readFile(copy, 'utf8'), tampered, '--check writes nothing');
    const missing = generate('--check', '--out', join(dir, 'nope.json'));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /missing/);
  });

  test('identifies itself: draft 2020-12, $id, title, trailing newline', async () => {
    const text = await readFile(schemaPath, 'utf8');
    assert.ok(text.endsWith('}\n'));
    const schema = JSON.parse(text) as JsonSchema;
    assert.deepEqual(Object.keys(schema).slice(0, 3), ['$schema', '$id', 'title']);
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.match(String(schema.$id), /^https:\/\/.+\/schema\.json$/);
    assert.equal(typeof schema.title, 'string');
  });

  test('rejects unknown top-level keys and lists exactly the config keys', async () => {
    const schema = await committed();
    assert.equal(schema.type, 'object');
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(Object.keys(schema.properties ?? {}).sort(), Object.keys(configSchema.shape).sort());
    // The zod schema agrees: an unknown key is an error naming it.
    const parsed = configSchema.safeParse({ rooot: '.' });
    assert.equal(parsed.success, false);
    assert.match(JSON.stringify(parsed.error?.issues), /rooot/);
  });

  test('every nested object with fixed keys rejects unknown keys too (maps keep a value schema)', async () => {
    const objects = objectSchemas(await committed());
    assert.ok(objects.length >= 5, `found ${objects.length} object schemas`);
    for (const [pointer, schema] of objects) {
      // A record (header names, user names) has no fixed properties and types its values instead.
      if (schema.properties === undefined && typeof schema.additionalProperties === 'object') continue;
      assert.equal(schema.additionalProperties, false, pointer);
    }
  });

  test('describes the input side: defaulted fields are optional and carry their default', async () => {
    const schema = await committed();
    assert.equal(schema.required, undefined, 'an empty config file is valid');
    assert.equal(schema.properties?.$schema?.type, 'string', 'editors may point "$schema" at the file');
    assert.equal(schema.properties?.listen?.properties?.port?.default, 8080);
    assert.deepEqual(schema.properties?.cachePolicy?.items?.required, ['cacheControl']);
  });
});
