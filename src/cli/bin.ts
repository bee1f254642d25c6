#!/usr/bin/env node
/** Entry point of the `workqueue-doctor` binary: runs the CLI and sets the exit code. */
import { EXIT } from './exit-codes.js';

// `serve` runs for a long time: it loads only its own command, not every other command's dependencies.
const run =
  process.argv[2] === 'serve' ? (await import('./serve-main.js')).serveMain : (await import('./main.js')).main;

run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`workqueue-doctor: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = EXIT.usage;
  },
);
