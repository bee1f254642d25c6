/** Runs the CLI in-process (`main`) with stdout and stderr captured; for command tests. */
import { vi } from 'vitest';
import { main } from '../../src/cli/main.js';

export type CliResult = { readonly code: number; readonly stdout: string; readonly stderr: string };

/** `workqueue-doctor <command> <args>`: the exit code and everything written to stdout and stderr. */
export async function runCli(command: string, ...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'workqueue-doctor', command, ...args]);
    return { code, stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}
