/**
 * The CLI a newcomer expects: every bad input prints one line (plus at most the help hint) and exits 2;
 * `diagnose --target` fails at once when no target can be read, naming each URL and the cause; progress
 * shows on a terminal only; `--record` writes a recording that `--recording` reads back with the same result;
 * `--config` takes serve's configuration file; old flag names still work.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressLine, scrapeWindow } from '../../src/cli/diagnose.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { Report } from '../../src/diagnosis/report.js';
import { runVirtual, startLiveSimulation } from '../../src/simulate/index.js';
import { type CliResult, runCli } from '../support/cli.js';
import { freePort, type LocalServer, startHttpServer, startHttpsServer } from '../support/local-server.js';
import { makeSelfSignedCert } from '../support/tls.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-usage-'));
const file = (name: string) => join(work, name);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

beforeAll(async () => {
  const run = await runVirtual('healthy', { seed: 2, durationMs: 10 * 60_000 });
  writeFileSync(file('healthy.om'), run.recording.text());
  writeFileSync(file('binary.om'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0xff, 0xfe]));
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** One `workqueue-doctor: ...` line, then at most the help hint of the command. */
function expectOneLine(result: CliResult, command: string, pattern: RegExp): void {
  expect(result.code).toBe(EXIT.usage);
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  expect(lines[0]).toMatch(/^workqueue-doctor: /);
  expect(lines[0]).toMatch(pattern);
  expect(lines.slice(1)).toEqual(lines.length > 1 ? [`see 'workqueue-doctor ${command} --help'`] : []);
  expect(result.stderr).not.toContain('Usage:');
}

describe('usage errors: one line and the help hint, exit 2', () => {
  it.each([
    [['diagnose', '--recordin', 'x'], /unknown option '--recordin'/],
    [['diagnose', '--recording', 'x', '--output', 'xml'], /argument 'xml' is invalid/],
    [['diagnose', '--recording', 'x', '-o', 'xml'], /argument 'xml' is invalid/],
    [['diagnose', '--recording'], /argument missing/],
    [['diagnose'], /give exactly one of --recording, --target or --prometheus-url/],
    [['serve', '--no-such-flag'], /unknown option '--no-such-flag'/],
    [['simulate', '--scenario', 'healthy', '--seed', 'x', '--record', 'x'], /--seed must be a non-negative integer/],
    [['calibrate', '--seeds', '0'], /--seeds must be an integer/],
    [['generate', '--bogus'], /unknown option '--bogus'/],
  ])('%j', async (args, pattern) => {
    const [command, ...rest] = args as [string, ...string[]];
    expectOneLine(await runCli(command, ...rest), command, pattern);
  });

  it('an unknown command points at the program help', async () => {
    const result = await runCli('diagnos');
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/^workqueue-doctor: unknown command 'diagnos'.*\nsee 'workqueue-doctor --help'\n$/);
  });

  it('files: missing, a directory, binary, named in plain words', async () => {
    expectOneLine(await runCli('diagnose', '--recording', file('absent.om')), 'diagnose', /absent\.om: no such file$/);
    expectOneLine(await runCli('diagnose', '--recording', work), 'diagnose', /is a directory, not a file$/);
    const binary = await runCli('diagnose', '--recording', file('binary.om'));
    expectOneLine(binary, 'diagnose', /binary\.om: not a text file \(binary content\)$/);
    expect(binary.stderr).not.toMatch(/[\x00-\x08\x7f]/);
    expectOneLine(
      await runCli('diagnose', '--recording', file('healthy.om'), '--config', work),
      'diagnose',
      /--config: cannot read ".*": a directory, not a regular file$/,
    );
    expectOneLine(
      await runCli('calibrate', '--grid', file('absent.json')),
      'calibrate',
      /--grid .*absent\.json: no such file$/,
    );
    expectOneLine(
      await runCli('simulate', '--scenario', 'healthy', '--duration', '1m', '--record', join(work, 'no', 'dir.om')),
      'simulate',
      /--record .*dir\.om: cannot write: the directory .*\/no does not exist/,
    );
  });

  it('--at: invalid, or outside the recording', async () => {
    expectOneLine(
      await runCli('diagnose', '--recording', file('healthy.om'), '--at', 'yesterday'),
      'diagnose',
      /invalid time "yesterday"/,
    );
    expectOneLine(
      await runCli('diagnose', '--recording', file('healthy.om'), '--at', '2025-01-01T00:00:00Z'),
      'diagnose',
      /--at 2025-01-01T00:00:00.000Z is outside the recording .*healthy\.om, which runs from 2026-01-01T00:00:\d\d\.\d+Z to 2026-01-01T00:(09|10):\d\d\.\d+Z$/,
    );
    expectOneLine(
      await runCli('diagnose', '--target', 'http://127.0.0.1:9/metrics', '--at', '2026-01-01T00:00:00Z'),
      'diagnose',
      /--at goes with --recording or --prometheus-url/,
    );
  });
});

describe('diagnose --target fails at once when no target can be read', () => {
  const servers: LocalServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  async function failFast(urls: string[], extra: string[] = []): Promise<{ result: CliResult; ms: number }> {
    const started = Date.now();
    const result = await runCli('diagnose', ...urls.flatMap((u) => ['--target', u]), '--window', '2m', ...extra);
    return { result, ms: Date.now() - started };
  }

  it('refused, HTTP 404, an HTML page, a TLS error: one line each, the URL without credentials', async () => {
    const notFound = await startHttpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found\n');
    });
    const html = await startHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!DOCTYPE html>\n<html>\n<head><title>Grafana</title></head>\n${'<div>x</div>\n'.repeat(40)}</html>\n`);
    });
    const cert = makeSelfSignedCert();
    const tls = await startHttpsServer(cert, (_req, res) => res.end('workqueue_depth{name="a"} 1\n'));
    servers.push(notFound, html, tls);
    try {
      const refused = `http://127.0.0.1:${await freePort()}/metrics`;
      const urls = [
        refused.replace('http://', 'http://user:secret@'),
        `${notFound.origin}/metrics`,
        `${html.origin}/metrics`,
        `${tls.origin}/metrics`,
      ];
      const { result, ms } = await failFast(urls);
      expect(ms).toBeLessThan(20_000);
      expect(result.code).toBe(EXIT.usage);
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain('secret');
      const lines = result.stderr.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(4);
      const line = (origin: string) => lines.find((l) => l.includes(origin)) ?? '';
      expect(line(refused)).toMatch(
        /^workqueue-doctor: cannot scrape http:\/\/127\.0\.0\.1:\d+\/metrics: connection refused/,
      );
      expect(line(notFound.origin)).toMatch(/: HTTP 404 Not Found$/);
      expect(line(html.origin)).toMatch(/: not a metrics page \(HTML\): "<!DOCTYPE html> <html> <head><title>Grafana/);
      expect(line(html.origin).length).toBeLessThan(200);
      expect(line(tls.origin)).toMatch(/: TLS: .*(self[- ]signed|certificate)/i);
    } finally {
      cert.remove();
    }
  });

  it('a Prometheus URL answering HTML: one line with a short excerpt', async () => {
    const page = `<!DOCTYPE html>\n<html lang="en">\n<head><title>Login</title></head>\n${'<p>sign in</p>\n'.repeat(40)}</html>\n`;
    const ok = await startHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page);
    });
    const missing = await startHttpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end(page);
    });
    servers.push(ok, missing);
    for (const [server, pattern] of [
      [ok, /the answer is HTML, not the Prometheus API/],
      [missing, /did not answer as a Prometheus query API \(POST \/api\/v1\/series answered HTTP 404\)/],
    ] as const) {
      const result = await runCli('diagnose', '--prometheus-url', server.origin);
      expectOneLine(result, 'diagnose', pattern);
      expect(result.stderr.length).toBeLessThan(400);
      expect(result.stderr).not.toContain('sign in</p> <p>sign in</p> <p>sign in');
    }
  });
});

describe('diagnose --target: progress, --record, old names', () => {
  it('prints no progress when stderr is not a terminal, and a progress line when it is', async () => {
    const source = {
      scrapeOnce: async () => {},
      targets: () => [{ name: 'a/b', labels: {} }],
    };
    const plain: string[] = [];
    expect(await scrapeWindow(source, 20, 10, { isTTY: false, write: (s) => plain.push(s) })).toBe(true);
    expect(plain).toEqual([]);
    const tty: string[] = [];
    expect(await scrapeWindow(source, 20, 10, { isTTY: true, write: (s) => tty.push(s) })).toBe(true);
    expect(tty.slice(0, 3).map((s) => s.replace('\r\x1b[K', ''))).toEqual([
      'scraping 1 target: 1 of 3 scrapes, 20ms left',
      'scraping 1 target: 2 of 3 scrapes, 10ms left',
      'scraping 1 target: 3 of 3 scrapes, 0s left',
    ]);
    // The line is cleared at the end, so the report starts on a clean line.
    expect(tty.at(-1)).toBe('\r\x1b[K');
    expect(progressLine(2, 25, 3, 1, 5000)).toBe('scraping 3 targets, 1 failing: 2 of 25 scrapes, 1m55s left');
  });

  it('the first round failing everywhere stops at once', async () => {
    let scrapes = 0;
    const source = {
      scrapeOnce: async () => {
        scrapes++;
      },
      targets: () => [{ name: 'a/b', labels: {}, error: { code: 'connection', message: 'refused' } }],
    };
    expect(await scrapeWindow(source, 120_000, 5_000, { isTTY: true, write: () => {} })).toBe(false);
    expect(scrapes).toBe(1);
  });

  it('--record writes the window; --recording reads it back with the same report', { timeout: 60_000 }, async () => {
    const live = await startLiveSimulation({ scenario: 'healthy', listen: '127.0.0.1:0' });
    const recording = file('window.om');
    let first: CliResult;
    const tty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: false, configurable: true });
    try {
      // --interval: the former name of --scrape-interval; -o: --output.
      first = await runCli(
        'diagnose',
        '--target',
        live.url,
        '--window',
        '3s',
        '--interval',
        '1s',
        '-o',
        'json',
        '--record',
        recording,
      );
    } finally {
      if (tty === undefined) Reflect.deleteProperty(process.stderr, 'isTTY');
      else Object.defineProperty(process.stderr, 'isTTY', tty);
      await live.stop();
    }
    // Three seconds judge no rule's range: unknown, exit 3, live and on replay alike.
    expect(first.code).toBe(EXIT.unknown);
    expect(first.stderr).toBe('');
    const live1 = JSON.parse(first.stdout) as Report;
    const text = readFileSync(recording, 'utf8');
    expect(text).toMatch(/^# TYPE /);
    expect(text).toMatch(/# TYPE workqueue_adds counter\n/);
    expect(text).toMatch(/# TYPE workqueue_queue_duration_seconds histogram\n/);
    expect(text.endsWith('# EOF\n')).toBe(true);
    const again = await runCli('diagnose', '--recording', recording, '--at', live1.evaluatedAt, '--output', 'json');
    expect(again.code).toBe(EXIT.unknown);
    const replay = JSON.parse(again.stdout) as Report;
    expect(replay.evaluatedAt).toBe(live1.evaluatedAt);
    expect(replay.queues).toEqual(live1.queues);
    expect(replay.queues.length).toBeGreaterThan(0);
  });
});

describe('diagnose: too little history', () => {
  it('one scrape reads unknown, not ok', async () => {
    const page = readFileSync(join(ROOT, 'test/fixtures/client-go/controller-runtime-hotloop.prom'), 'utf8');
    const stamped = page
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => (l.startsWith('#') ? l : `${l} 1767225600`));
    writeFileSync(file('one-scrape.om'), `${stamped.join('\n')}\n# EOF\n`);
    const { code, stdout } = await runCli('diagnose', '--recording', file('one-scrape.om'), '-o', 'json');
    expect(code).toBe(EXIT.unknown);
    const report = JSON.parse(stdout) as Report;
    expect(report.queues.length).toBeGreaterThan(0);
    expect(new Set(report.queues.map((q) => q.status))).toEqual(new Set(['unknown']));
  });
});

describe('diagnose --config takes serve configuration files', () => {
  it.each(['deploy/config-example.yaml', 'deploy/standalone/config.yaml'])('%s', async (config) => {
    // Ten minutes of a healthy controller: nothing fires; the rules reading 15 or 30 minutes are not judged.
    const result = await runCli('diagnose', '--recording', file('healthy.om'), '--config', join(ROOT, config));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(EXIT.unknown);
  });

  it('still names an unknown key', async () => {
    writeFileSync(file('bad.yaml'), 'rulez: {}\n');
    expectOneLine(
      await runCli('diagnose', '--recording', file('healthy.om'), '--config', file('bad.yaml')),
      'diagnose',
      /bad\.yaml: rulez: unknown key; expected one of .*rules, queues/,
    );
  });
});
