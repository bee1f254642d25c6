/**
 * A configuration file is a bounded input for every command: over `MAX_CONFIG_FILE_BYTES` it is refused before
 * it is read, aliases that expand past `MAX_CONFIG_ALIAS_COUNT` (a "billion laughs") are refused before they
 * are expanded, binary content and anything but a regular file (a FIFO: without blocking) are refused, each
 * in one line that names the file and quotes nothing of it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { ConfigError } from '../../src/config/config-error.js';
import { MAX_CONFIG_ALIAS_COUNT } from '../../src/config/config-layers.js';
import { MAX_CONFIG_FILE_BYTES } from '../../src/config/read-config-file.js';
import { loadServiceConfig } from '../../src/config/service-config.js';
import { runCli } from '../support/cli.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-config-bounds-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const written = (name: string, content: string | Buffer): string => {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
};

/** Nine levels of nine aliases each: 9^9 strings once expanded, in under 1 KB. */
function billionLaughs(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let level = 1; level < 9; level++) {
    const [name, previous] = [String.fromCharCode(97 + level), String.fromCharCode(96 + level)];
    lines.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${previous}`).join(',')}]`);
  }
  return `${lines.join('\n')}\n`;
}

const tooLarge = written('large.yaml', `# ${'x'.repeat(MAX_CONFIG_FILE_BYTES)}\nlisten: 127.0.0.1:9808\n`);
const laughs = written('laughs.yaml', billionLaughs());
const binary = written('binary.yaml', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0xff, 0xfe, 0x00, 0x01]));
const fifo = join(work, 'fifo.yaml');
execFileSync('mkfifo', [fifo]);

async function loadFailure(flags: Record<string, unknown>, env: Record<string, string> = {}): Promise<string> {
  const error = await loadServiceConfig(flags, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
}

describe('configuration file bounds', () => {
  it('refuses a file over the size limit before reading it, naming it', async () => {
    const size = MAX_CONFIG_FILE_BYTES + 26;
    expect(await loadFailure({ config: tooLarge })).toBe(
      `--config: cannot read ${JSON.stringify(tooLarge)}: larger than ${MAX_CONFIG_FILE_BYTES} bytes (${size}), the limit of a configuration file`,
    );
  });

  it('refuses a billion laughs before expanding it, naming the file', async () => {
    expect(await loadFailure({}, { WQD_CONFIG: laughs })).toBe(
      `${laughs}: not a usable YAML document: its aliases expand too far (more than ${MAX_CONFIG_ALIAS_COUNT} alias expansions)`,
    );
  });

  it('keeps aliases that share a few settings', async () => {
    const shared = written(
      'shared.yaml',
      'queues:\n  - { name: a, rules: &quiet { WorkqueueBacklog: { thresholds: { minDepth: 1000 } } } }\n  - { name: b, rules: *quiet }\n',
    );
    const config = await loadServiceConfig({ config: shared }, {});
    expect(config.overrides.queues?.map((q) => q.rules)).toEqual([
      { WorkqueueBacklog: { thresholds: { minDepth: 1000 } } },
      { WorkqueueBacklog: { thresholds: { minDepth: 1000 } } },
    ]);
  });

  it('refuses binary content, a FIFO (without blocking) and a missing file in plain words', async () => {
    expect(await loadFailure({ config: binary })).toBe(
      `--config: cannot read ${JSON.stringify(binary)}: not a text file (binary content)`,
    );
    expect(await loadFailure({}, { WQD_CONFIG: fifo })).toBe(
      `WQD_CONFIG: cannot read ${JSON.stringify(fifo)}: a FIFO (named pipe), not a regular file`,
    );
    const missing = join(work, 'missing.yaml');
    expect(await loadFailure({ config: missing })).toBe(
      `--config: cannot read ${JSON.stringify(missing)}: no such file`,
    );
  });

  it('follows a symbolic link to the file (a mounted ConfigMap is one)', async () => {
    const file = written('real.yaml', 'scrape:\n  interval: 30s\n');
    const link = join(work, 'link.yaml');
    symlinkSync(file, link);
    expect((await loadServiceConfig({ config: link }, {})).scrape.intervalMs).toBe(30_000);
  });

  it.each([
    ['serve', []],
    ['diagnose', ['--recording', 'x.om']],
    ['generate', ['--out', 'x']],
  ])('%s exits 2 with one line naming the file', async (command, rest) => {
    // A file that cannot be read is the input's fault: its line comes alone. One read but unusable gets the hint.
    for (const [file, reason, hinted] of [
      [tooLarge, /larger than \d+ bytes/, false],
      [laughs, /its aliases expand too far/, true],
      [binary, /not a text file \(binary content\)/, false],
    ] as const) {
      const result = await runCli(command, ...rest, '--config', file);
      expect(result.code).toBe(EXIT.usage);
      const [first, ...others] = result.stderr.split('\n');
      expect(first).toContain(file);
      expect(first).toMatch(reason);
      expect(others).toEqual(hinted ? [`see 'workqueue-doctor ${command} --help'`, ''] : ['']);
    }
  });
});
