/**
 * Errors a newcomer meets first, each run as a process (so a Node warning or a stack would show): exactly one line
 * on stderr, `workqueue-doctor: ` then the flag or the file and what to do about it, no stack, no escaped bytes,
 * nothing on stdout, exit 2 (exit-codes.ts: usage errors and unreadable input alike).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';
import { spawnCli } from '../support/cli-process.js';
import { type LocalServer, startHttpServer } from '../support/local-server.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-one-line-'));
const file = (name: string) => join(work, name);
let notPrometheus: LocalServer | undefined;

beforeAll(async () => {
  writeFileSync(file('binary.yaml'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0xff, 0xfe, 0x00, 0x01]));
  writeFileSync(file('empty.om'), '');
  writeFileSync(file('a-file'), 'not a directory\n');
  mkdirSync(file('a-directory'));
  // What a wrong URL finds: a server without the Prometheus API (here, nothing but 404s).
  notPrometheus = await startHttpServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found\n');
  });
});

afterAll(async () => {
  await notPrometheus?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Runs `workqueue-doctor <args>` to its end; the one line it printed on stderr, after checking it is the only one. */
async function onlyLine(args: readonly string[]): Promise<string> {
  const cli = spawnCli(args);
  try {
    const code = await cli.exited;
    const stderr = cli.stderr();
    expect(code, stderr).toBe(EXIT.usage);
    expect(cli.stdout()).toBe('');
    const lines = stderr.split('\n');
    expect(lines, stderr).toHaveLength(2);
    expect(lines[1]).toBe('');
    const line = lines[0] as string;
    expect(line).toMatch(/^workqueue-doctor: /);
    expect(line).not.toMatch(/Warning|Error:|\bat .*:\d+:\d+/);
    expect(line).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]|\\x[0-9a-f]{2}|\\u[0-9a-f]{4}/i);
    return line;
  } finally {
    await cli.stop();
  }
}

describe('one line naming the flag or the file, and what to do', () => {
  it.each(['serve', 'generate'])('%s --config <binary file>', async (command) => {
    const line = await onlyLine([command, '--config', file('binary.yaml')]);
    expect(line).toBe(
      `workqueue-doctor: --config: cannot read "${file('binary.yaml')}": not a text file (binary content)`,
    );
  });

  it('serve --config <missing file>', async () => {
    const line = await onlyLine(['serve', '--config', file('nope.yaml')]);
    expect(line).toBe(`workqueue-doctor: --config: cannot read "${file('nope.yaml')}": no such file`);
  });

  it('serve --config <directory>', async () => {
    const line = await onlyLine(['serve', '--config', file('a-directory')]);
    expect(line).toBe(
      `workqueue-doctor: --config: cannot read "${file('a-directory')}": a directory, not a regular file`,
    );
  });

  it('generate --out <file>', async () => {
    const line = await onlyLine(['generate', '--out', file('a-file')]);
    expect(line).toBe(
      `workqueue-doctor: --out ${file('a-file')}: is a file, not a directory; give the directory to write into (a missing one is created)`,
    );
  });

  it('simulate --scenario <unknown>: every scenario, on the one line', async () => {
    const line = await onlyLine(['simulate', '--scenario', 'nope', '--record', file('x.om')]);
    expect(line).toBe(`workqueue-doctor: --scenario: unknown scenario "nope"; known: ${SCENARIO_NAMES.join(', ')}`);
  });

  it('diagnose --recording <empty file>: says how to make a recording', async () => {
    const line = await onlyLine(['diagnose', '--recording', file('empty.om')]);
    expect(line).toBe(
      `workqueue-doctor: --recording ${file('empty.om')}: the file is empty; record one with \`workqueue-doctor diagnose --target URL --record FILE\` or \`workqueue-doctor simulate --scenario NAME --record FILE\``,
    );
  });

  it('simulate --duration <not a duration>', async () => {
    const line = await onlyLine(['simulate', '--scenario', 'healthy', '--duration', '5x', '--record', file('x.om')]);
    expect(line).toMatch(
      /^workqueue-doctor: --duration: invalid duration "5x".*: expected a Prometheus duration such as 30s/,
    );
  });

  it('simulate --record <file in a missing directory>: names the directory', async () => {
    const target = join(work, 'missing', 'dir', 'x.om');
    const line = await onlyLine(['simulate', '--scenario', 'healthy', '--duration', '1m', '--record', target]);
    expect(line).toBe(
      `workqueue-doctor: --record ${target}: cannot write: the directory ${join(work, 'missing', 'dir')} does not exist: create it first, or give a path in an existing directory`,
    );
  });

  it('diagnose --prometheus-url <not a Prometheus>: the status, and the base URL to give', async () => {
    const origin = notPrometheus?.origin as string;
    const line = await onlyLine(['diagnose', '--prometheus-url', `${origin}/api/v1`]);
    expect(line).toBe(
      `workqueue-doctor: --prometheus-url ${origin}/api/v1 did not answer as a Prometheus query API (POST /api/v1/api/v1/series answered HTTP 404); give the base URL the API paths follow: ${origin}`,
    );
    const bare = await onlyLine(['diagnose', '--prometheus-url', origin]);
    expect(bare).toMatch(/did not answer as a Prometheus query API \(POST \/api\/v1\/series answered HTTP 404\)/);
    expect(bare).toContain('give the base URL the API paths follow, e.g. http://prometheus:9090');
    expect(bare).not.toContain('404 page not found');
  });
});
