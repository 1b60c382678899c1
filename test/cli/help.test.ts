// The help and the README list exactly the flags the parser takes (issue 26 §2): for every command,
// the `--flags` on its lines of `gatehouse --help` and of the README's CLI block are compared with the
// table the command parses (src/cli/args.ts). A flag added to a parser and not documented fails here,
// and so does a documented flag the parser refuses.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type FlagTable, flagNames } from '../../src/cli/args.js';
import { CERT_FLAGS } from '../../src/cli/cert.js';
import { CHECK_FLAGS } from '../../src/cli/check.js';
import { HASH_FLAGS } from '../../src/cli/hash.js';
import { HASH_PASSWORD_FLAGS } from '../../src/cli/hash-password.js';
import { HELP, SERVE_FLAGS } from '../../src/cli/main.js';
import { PRECOMPRESS_FLAGS } from '../../src/cli/precompress.js';
import { SW_MANIFEST_FLAGS } from '../../src/cli/sw-manifest.js';
import { TRUST_FLAGS } from '../../src/cli/trust.js';

const COMMANDS: Record<string, FlagTable> = {
  serve: SERVE_FLAGS,
  precompress: PRECOMPRESS_FLAGS,
  'hash-password': HASH_PASSWORD_FLAGS,
  hash: HASH_FLAGS,
  'sw-manifest': SW_MANIFEST_FLAGS,
  cert: CERT_FLAGS,
  trust: TRUST_FLAGS,
  check: CHECK_FLAGS,
};

/** The parser's long flags, without --help (documented once, for every command). */
function parserFlags(table: FlagTable): string[] {
  return flagNames(table)
    .filter((f) => f.startsWith('--') && f !== '--help')
    .sort();
}

/** The usage lines of each command in `text`: a `gatehouse CMD` line and the indented lines after it. */
function usageLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^Usage:\s*/, '').trimStart();
    const m = /^gatehouse (\[serve\]|[a-z-]+)/.exec(line);
    if (m) {
      current = m[1] === '[serve]' ? 'serve' : m[1]!;
      if (!(current in COMMANDS)) current = undefined;
      else out.set(current, `${out.get(current) ?? ''} ${line}`);
    } else if (current !== undefined && /^\s{2,}\S/.test(raw) && !/^\s*-/.test(raw.trim())) {
      out.set(current, `${out.get(current)} ${line}`);
    } else current = undefined;
  }
  return out;
}

/** Every `--flag` named in a text (`--flag`, `[--flag N]`, `--flag=...`). */
const flagsIn = (text: string): string[] =>
  [...new Set(text.match(/--[a-z][a-z0-9-]*/g) ?? [])]
    .filter((f) => f !== '--help' && f !== '--version')
    .sort();

describe('--help and the README match the parsers', () => {
  const help = usageLines(HELP);
  // serve's options have their own section of the help: the option column of each `  -x, --flag` line.
  const serveStart = HELP.indexOf('serve options:');
  const serveSection = HELP.slice(serveStart, HELP.indexOf('\n\n', serveStart))
    .split('\n')
    .filter((l) => /^\s{2}-/.test(l))
    .map((l) => l.trim().split(/\s{2,}/)[0])
    .join(' ');
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
  const cliBlock = /## CLI\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const documented = usageLines(cliBlock);

  it('the README has a CLI block', () => assert.ok(cliBlock.includes('gatehouse')));

  for (const [command, table] of Object.entries(COMMANDS)) {
    it(`${command}: --help lists exactly the parser's flags`, () => {
      const text =
        command === 'serve' ? `${help.get('serve') ?? ''} ${serveSection}` : (help.get(command) ?? '');
      assert.ok(text !== '', `gatehouse --help has no line for ${command}`);
      assert.deepEqual(flagsIn(text), parserFlags(table));
    });
    it(`${command}: the README's CLI block lists exactly the parser's flags`, () => {
      const text = documented.get(command) ?? '';
      assert.ok(text !== '', `the README's CLI block has no line for ${command}`);
      assert.deepEqual(flagsIn(text), parserFlags(table));
    });
  }

  it('short spellings the parsers take are in the help', () => {
    for (const table of Object.values(COMMANDS))
      for (const f of flagNames(table).filter((n) => /^-[a-z]$/i.test(n) && n !== '-h'))
        assert.match(HELP, new RegExp(`(^|\\s)${f},? `, 'm'), f);
  });
});
