#!/usr/bin/env node
/** Entry point of the `workqueue-doctor` binary: runs the CLI and sets the exit code. */
import { EXIT } from './exit-codes.js';
import { main } from './main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`workqueue-doctor: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = EXIT.usage;
  },
);
