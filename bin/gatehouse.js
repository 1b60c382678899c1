#!/usr/bin/env node
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(`gatehouse: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
