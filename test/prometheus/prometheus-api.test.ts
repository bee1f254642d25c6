import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import {
  createPrometheusClient,
  PrometheusApiError,
  type PrometheusClient,
  parseSampleValue,
  type QueryResult,
} from '../../src/prometheus/prometheus-api.js';
import { createHttpAgents, type HttpAgents } from '../../src/scrape/http-transport.js';
import { freePort, type LocalServer, startHttpServer, waitFor } from '../support/local-server.js';
import {
  EXPORTER_JOB,
  type RunningPrometheus,
  startPrometheusScrapingExporter,
} from '../support/prometheus-scraper.js';

async function apiError(p: Promise<unknown>): Promise<PrometheusApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PrometheusApiError);
    return err as PrometheusApiError;
  }
  throw new Error('expected the call to fail');
}

function vector(r: QueryResult) {
  if (r.resultType !== 'vector') throw new Error(`expected a vector, got ${r.resultType}`);
  return r.result;
}
function scalar(r: QueryResult) {
  if (r.resultType !== 'scalar') throw new Error(`expected a scalar, got ${r.resultType}`);
  return r.result;
}

describe('parseSampleValue', () => {
  it('maps the API strings to numbers', () => {
    expect(parseSampleValue('1.5')).toBe(1.5);
    expect(parseSampleValue('-2e-3')).toBe(-0.002);
    expect(parseSampleValue('NaN')).toBeNaN();
    expect(parseSampleValue('+Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleValue('-Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(() => parseSampleValue('abc')).toThrow(/not a number/);
    expect(() => parseSampleValue('')).toThrow(/not a number/);
    expect(() => parseSampleValue(3)).toThrow(/not a string/);
  });
});

describe('Prometheus API client against a real Prometheus', () => {
  let prom: RunningPrometheus;
  let client: PrometheusClient;
  let agents: HttpAgents;

  beforeAll(async () => {
    prom = await startPrometheusScrapingExporter();
    agents = createHttpAgents();
    client = createPrometheusClient({ url: prom.url, timeoutMs: 10_000, agents });
    // the first scrape comes about 6 s after start; range queries want a few samples
    await waitFor(
      'four scrapes of the exporter',
      async () => {
        const r = await client.query(`count_over_time(${WORKQUEUE.adds}{job="${EXPORTER_JOB}"}[1m])`);
        const v = vector(r)[0]?.value ?? 0;
        return v >= 4;
      },
      45_000,
      250,
    ).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\nprometheus output:\n${prom.output()}`);
    });
  }, 60_000);

  afterAll(async () => {
    agents?.http.destroy();
    agents?.https.destroy();
    await prom?.stop();
  });

  it('runs an instant query and returns a typed vector', async () => {
    const r = await client.query(`${WORKQUEUE.depth}{job="${EXPORTER_JOB}"}`);
    expect(r.resultType).toBe('vector');
    expect(r.warnings).toEqual([]);
    const samples = vector(r);
    expect(samples).toHaveLength(1);
    expect(samples[0]?.metric).toEqual({
      __name__: WORKQUEUE.depth,
      job: EXPORTER_JOB,
      instance: prom.exporter.hostPort,
      name: 'demo',
    });
    expect(samples[0]?.value).toBe(3);
    expect(samples[0]?.timeSec).toBeGreaterThan(1_600_000_000);
  });

  it('evaluates at a given time, and returns scalars and strings', async () => {
    const t = 1_700_000_000.5;
    const r = await client.query('time()', t);
    expect(scalar(r)).toEqual({ timeSec: t, value: t });
    const s = await client.query('"hello"', t);
    expect(s).toEqual({ resultType: 'string', result: { timeSec: t, value: 'hello' }, warnings: [] });
  });

  it('turns NaN, +Inf and -Inf into numbers', async () => {
    expect(scalar(await client.query('1/0')).value).toBe(Number.POSITIVE_INFINITY);
    expect(scalar(await client.query('-1/0')).value).toBe(Number.NEGATIVE_INFINITY);
    expect(scalar(await client.query('0/0')).value).toBeNaN();
    expect(vector(await client.query('vector(0)/0'))[0]?.value).toBeNaN();
  });

  it('runs a range query and returns step-aligned samples', async () => {
    const now = Math.floor(Date.now() / 1000);
    const r = await client.queryRange(`${WORKQUEUE.adds}{job="${EXPORTER_JOB}"}`, now - 60, now, 1);
    expect(r.resultType).toBe('matrix');
    expect(r.result).toHaveLength(1);
    const series = r.result[0]!;
    expect(series.metric['name']).toBe('demo');
    expect(series.samples.length).toBeGreaterThanOrEqual(3);
    for (const [i, p] of series.samples.entries()) {
      expect(Number.isInteger(p.timeSec)).toBe(true);
      if (i > 0) {
        expect(p.timeSec).toBeGreaterThan(series.samples[i - 1]!.timeSec);
        expect(p.value).toBeGreaterThanOrEqual(series.samples[i - 1]!.value);
      }
    }
  });

  it('sends long expressions in the request body', async () => {
    const expr = `${WORKQUEUE.depth}{job="${EXPORTER_JOB}"}${' + 0 * 1'.repeat(2500)}`;
    expect(expr.length).toBeGreaterThan(20_000);
    const samples = vector(await client.query(expr));
    expect(samples[0]?.value).toBe(3);
  });

  it('lists series and label values', async () => {
    const series = await client.series([WORKQUEUE.depth, `${WORKQUEUE.adds}{name="demo"}`]);
    const names = series.map((s) => s['__name__']).sort();
    expect(names).toEqual([WORKQUEUE.adds, WORKQUEUE.depth]);
    expect(series.every((s) => s['job'] === EXPORTER_JOB)).toBe(true);
    const now = Math.floor(Date.now() / 1000);
    expect(await client.series([WORKQUEUE.depth], now - 3600, now + 60)).toHaveLength(1);
    expect(await client.labelValues('job')).toContain(EXPORTER_JOB);
    expect(await client.labelValues('name', [WORKQUEUE.depth])).toEqual(['demo']);
    expect(await client.labelValues('name', ['nothing_like_this'])).toEqual([]);
  });

  it('reads the build info', async () => {
    const info = await client.buildInfo();
    expect(info.version).toMatch(/^2\.\d+\.\d+/);
    expect(info.goVersion).toMatch(/^go/);
  });

  it('reports an invalid expression as a typed bad_data error', async () => {
    const err = await apiError(client.query('sum(rate(foo[5m])'));
    expect(err.kind).toBe('api');
    expect(err.errorType).toBe('bad_data');
    expect(err.status).toBe(400);
    expect(err.expr).toBe('sum(rate(foo[5m])');
    expect(err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query: bad_data: .*parse error/);
    expect(err.message).toContain('(HTTP 400) [expr: sum(rate(foo[5m])]');
    const range = await apiError(client.queryRange('up', 100, 10, 1));
    expect(range.errorType).toBe('bad_data');
  });
});

describe('Prometheus API client against a fake server', () => {
  interface Seen {
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    body: string;
  }
  let seen: Seen[];
  let fake: LocalServer;
  let reply: (req: Seen, res: http.ServerResponse) => void;
  let dir: string;

  const json = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wqd-promapi-'));
    fake = await startHttpServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        seen.push(s);
        reply(s, res);
      });
    });
  });
  afterEach(() => {
    seen = [];
  });
  afterAll(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
  seen = [];

  const emptyVector = (_s: Seen, res: http.ServerResponse): void =>
    json(res, 200, { status: 'success', data: { resultType: 'vector', result: [] } });

  it('sends bearer token, tenant header and a form-encoded POST under a path prefix', async () => {
    reply = emptyVector;
    const client = createPrometheusClient({
      url: `${fake.origin}/prometheus/`,
      timeoutMs: 5_000,
      bearerToken: 'tok-1',
      headers: { 'X-Scope-OrgID': 'team-a' },
    });
    const r = await client.query('sum by (name) (rate(workqueue_adds_total{job="x y"}[5m]))', 1234.5);
    expect(r).toEqual({ resultType: 'vector', result: [], warnings: [] });
    const s = seen[0]!;
    expect(s.method).toBe('POST');
    expect(s.url).toBe('/prometheus/api/v1/query');
    expect(s.headers.authorization).toBe('Bearer tok-1');
    expect(s.headers['x-scope-orgid']).toBe('team-a');
    expect(s.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(s.body);
    expect(form.get('query')).toBe('sum by (name) (rate(workqueue_adds_total{job="x y"}[5m]))');
    expect(form.get('time')).toBe('1234.5');
  });

  it('sends basic auth', async () => {
    reply = (_s, res) => json(res, 200, { status: 'success', data: ['a', 'b'] });
    const client = createPrometheusClient({
      url: fake.origin,
      timeoutMs: 5_000,
      basicAuth: { username: 'alice', password: 'p:ss' },
    });
    expect(await client.labelValues('job', ['up{a="1"}'], 10, 20)).toEqual(['a', 'b']);
    const s = seen[0]!;
    expect(s.method).toBe('GET');
    expect(s.headers.authorization).toBe(`Basic ${Buffer.from('alice:p:ss').toString('base64')}`);
    const u = new URL(s.url, fake.origin);
    expect(u.pathname).toBe('/api/v1/label/job/values');
    expect(u.searchParams.getAll('match[]')).toEqual(['up{a="1"}']);
    expect(u.searchParams.get('start')).toBe('10');
    expect(u.searchParams.get('end')).toBe('20');
  });

  it('reads the bearer token from a file and re-reads it when it changes', async () => {
    reply = (_s, res) => json(res, 200, { status: 'success', data: [{ __name__: 'up', job: 'j' }] });
    const file = join(dir, 'token');
    writeFileSync(file, 'from-file-1\n');
    const client = createPrometheusClient({ url: fake.origin, timeoutMs: 5_000, bearerTokenFile: file });
    expect(await client.series(['up', 'other'])).toEqual([{ __name__: 'up', job: 'j' }]);
    writeFileSync(file, 'from-file-2-longer\n');
    await client.series(['up']);
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer from-file-1', 'Bearer from-file-2-longer']);
    expect(new URLSearchParams(seen[0]!.body).getAll('match[]')).toEqual(['up', 'other']);
  });

  it('decodes matrices with NaN and Inf, and passes warnings through', async () => {
    reply = (_s, res) =>
      json(res, 200, {
        status: 'success',
        warnings: ['partial response'],
        data: {
          resultType: 'matrix',
          result: [
            {
              metric: { name: 'q' },
              values: [
                [10, '1'],
                [11, 'NaN'],
                [12, '+Inf'],
                [13, '-Inf'],
              ],
            },
          ],
        },
      });
    const client = createPrometheusClient({ url: fake.origin, timeoutMs: 5_000 });
    const r = await client.queryRange('q', 10, 13, 1);
    expect(r.warnings).toEqual(['partial response']);
    expect(r.result[0]?.samples.map((p) => p.value)).toEqual([
      1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ]);
    const form = new URLSearchParams(seen[0]!.body);
    expect([form.get('start'), form.get('end'), form.get('step')]).toEqual(['10', '13', '1']);
  });

  it('types API errors, proxy errors, bad answers and transport failures', async () => {
    const client = createPrometheusClient({ url: fake.origin, timeoutMs: 5_000 });
    reply = (_s, res) => json(res, 422, { status: 'error', errorType: 'execution', error: 'too many samples' });
    const exec = await apiError(client.query('big'));
    expect([exec.kind, exec.errorType, exec.status, exec.expr]).toEqual(['api', 'execution', 422, 'big']);
    expect(exec.message).toBe(`POST ${fake.origin}/api/v1/query: execution: too many samples (HTTP 422) [expr: big]`);

    reply = (_s, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    const proxy = await apiError(client.query('up'));
    expect([proxy.kind, proxy.errorType, proxy.status]).toEqual(['http', 'http_status', 502]);
    expect(proxy.message).toContain('HTTP 502 Bad Gateway: <html>bad gateway</html>');

    reply = (_s, res) => json(res, 200, { status: 'success', data: { resultType: 'vector', result: [{ value: 3 }] } });
    const decode = await apiError(client.query('up'));
    expect([decode.kind, decode.errorType]).toEqual(['decode', 'bad_response']);

    const port = await freePort();
    const down = createPrometheusClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 5_000 });
    const conn = await apiError(down.query('up'));
    expect([conn.kind, conn.errorType, conn.expr]).toEqual(['transport', 'connection', 'up']);
    expect(conn.message).toContain(`POST http://127.0.0.1:${port}/api/v1/query: connection: connection refused`);

    reply = () => {
      // never answer
    };
    const slow = createPrometheusClient({ url: fake.origin, timeoutMs: 100 });
    const timeout = await apiError(slow.buildInfo());
    expect([timeout.kind, timeout.errorType]).toEqual(['transport', 'timeout']);
  });

  it('never repeats the credentials an upstream echoes back, in any error', async () => {
    const token = 'planted-bearer-T0ken-for-echo';
    const apiKey = 'planted-api-key-value';
    const client = createPrometheusClient({
      url: fake.origin,
      timeoutMs: 5_000,
      bearerToken: token,
      headers: { 'X-Scope-OrgID': 'team-a', 'X-Api-Key': apiKey },
    });
    const echo = (s: Seen): string =>
      `you sent: authorization=${s.headers.authorization} x-api-key=${s.headers['x-api-key']} tenant=${s.headers['x-scope-orgid']}`;
    const errors: string[] = [];
    reply = (s, res) => json(res, 400, { status: 'error', errorType: 'bad_data', error: echo(s) });
    errors.push((await apiError(client.query('up'))).message);
    reply = (s, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(echo(s));
    };
    errors.push((await apiError(client.query('up'))).message);
    reply = (s, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html>${echo(s)}</html>`);
    };
    errors.push((await apiError(client.query('up'))).message);
    const basic = createPrometheusClient({
      url: fake.origin,
      timeoutMs: 5_000,
      basicAuth: { username: 'reader', password: 'planted-passw0rd' },
    });
    reply = (s, res) => json(res, 401, { status: 'error', errorType: 'unauthorized', error: echo(s) });
    errors.push((await apiError(basic.query('up'))).message);
    for (const message of errors) {
      expect(message).toContain('<secret>');
      for (const secret of [
        token,
        apiKey,
        'planted-passw0rd',
        Buffer.from('reader:planted-passw0rd').toString('base64'),
      ]) {
        expect(message).not.toContain(secret);
      }
    }
    expect(errors[0]).toContain('tenant=team-a');
  });
});
