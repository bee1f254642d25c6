/**
 * The page's sign-in against a guessing client, and what the service says about it:
 * - rapid wrong tokens from one address: the burst is answered 401, the attempt after it 429 `too_many_requests`
 *   with `Retry-After`, and the log holds one summary line with the counts, not one line per attempt; another
 *   address is not affected; the throttle's table stays within its bound;
 * - the session cookie is `Secure` when the request came over HTTPS through a trusted proxy
 *   (`X-Forwarded-Proto: https`), or when the app is told to; not when an untrusted client claims it;
 * - a token shorter than 16 bytes is refused at start, from the flag, the environment or the app's own options;
 * - no token appears in the log at debug level, whether in the query string, the path or a header.
 * The throttle refills so slowly here that no assertion depends on how long anything took. Every app is closed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { type AppOptions, buildApp } from '../../src/server/app.js';
import { clientOf, createClientThrottle } from '../../src/server/client-throttle.js';
import { rulesView } from '../../src/server/rules-view.js';
import { createServiceRuntime } from '../../src/service/runtime.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { type ErrorBody, mixedReport, SCRAPE_TARGETS } from './helpers.js';

const TOKEN = 'sign-in-T0ken-0123456789abcdef';
const BURST = 5;
/** One attempt an hour: nothing refills while a test runs. */
const NO_REFILL = { burst: BURST, perSecond: 1 / 3600, maxClients: 64 };

const apps: FastifyInstance[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function app(options: Partial<Omit<AppOptions, 'report'>> & { report?: Report } = {}): Promise<FastifyInstance> {
  const { report, ...rest } = options;
  const built = await buildApp({
    report: () => report,
    ready: () => report !== undefined,
    targets: () => SCRAPE_TARGETS,
    rules: rulesView({}, DEFAULT_RUNBOOK_BASE_URL),
    metrics: createServiceMetrics({ processMetrics: false }).registry,
    apiToken: TOKEN,
    ...rest,
    limits: { signIn: NO_REFILL, ...rest.limits },
  });
  apps.push(built);
  await built.ready();
  return built;
}

const signIn = (a: FastifyInstance, token: string, extra: { remoteAddress?: string; headers?: object } = {}) =>
  a.inject({
    method: 'POST',
    url: '/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...extra.headers },
    payload: new URLSearchParams({ token }).toString(),
    ...(extra.remoteAddress !== undefined ? { remoteAddress: extra.remoteAddress } : {}),
  });

describe('sign-in throttle', () => {
  it('answers the attempt after the burst with 429 and logs one summary line, not one per attempt', async () => {
    const lines: string[] = [];
    const a = await app({ logger: capturingLogger(lines) });
    const statuses: number[] = [];
    for (let i = 0; i < BURST; i++) statuses.push((await signIn(a, `wrong-${i}`)).statusCode);
    expect(statuses).toEqual(Array(BURST).fill(401));

    const refused = await signIn(a, 'wrong-again');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((JSON.parse(refused.body) as ErrorBody).error.code).toBe('too_many_requests');
    // Throttled means throttled: the right token too, until the bucket refills.
    expect((await signIn(a, TOKEN)).statusCode).toBe(429);
    // Another address has its own attempts.
    expect((await signIn(a, 'wrong', { remoteAddress: '192.0.2.7' })).statusCode).toBe(401);
    expect((await signIn(a, TOKEN, { remoteAddress: '192.0.2.8' })).statusCode).toBe(303);

    await a.close();
    const summaries = lines.filter((line) => line.includes('page sign-in'));
    expect(summaries).toHaveLength(1);
    const summary = JSON.parse(summaries[0] as string) as { wrongToken: number; throttled: number; clients: number };
    expect(summary).toMatchObject({ wrongToken: BURST + 1, throttled: 2, clients: 2 });
    expect(lines.join('')).not.toContain(TOKEN);
  });

  it('keeps its table of clients within its bound, and takes an IPv6 client by its /64', () => {
    const throttle = createClientThrottle({ burst: 1, perSecond: 1 / 3600, maxClients: 3 }, () => 0);
    for (let i = 0; i < 100; i++) throttle.take(`198.51.100.${i}`);
    expect(throttle.clients).toBe(3);
    expect(clientOf('2001:db8:1:2:aaaa::1')).toBe(clientOf('2001:0db8:0001:0002:ffff:1:2:3'));
    expect(clientOf('2001:db8:1:2::1')).not.toBe(clientOf('2001:db8:1:3::1'));
    expect(clientOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    const six = createClientThrottle({ burst: 1, perSecond: 1 / 3600, maxClients: 3 }, () => 0);
    expect(six.take('2001:db8:1:2::1')).toBeUndefined();
    expect(six.take('2001:db8:1:2::99')).toBeGreaterThan(0);
  });
});

describe('the session cookie', () => {
  const cookieOf = async (a: FastifyInstance, remoteAddress: string, headers: object = {}) =>
    String((await signIn(a, TOKEN, { remoteAddress, headers })).headers['set-cookie']);

  it('is Secure behind a trusted proxy that says the request came over HTTPS', async () => {
    const behindProxy = await app({ trustProxy: 'loopback' });
    expect(await cookieOf(behindProxy, '127.0.0.1', { 'x-forwarded-proto': 'https' })).toContain('; Secure');
    expect(await cookieOf(behindProxy, '127.0.0.1', { 'x-forwarded-proto': 'http' })).not.toContain('Secure');
    // A client that is not a trusted proxy cannot claim HTTPS.
    expect(await cookieOf(behindProxy, '203.0.113.9', { 'x-forwarded-proto': 'https' })).not.toContain('Secure');
    const direct = await app();
    expect(await cookieOf(direct, '127.0.0.1', { 'x-forwarded-proto': 'https' })).not.toContain('Secure');
  });

  it('is Secure when the app is told so, and the sign-out cookie with it', async () => {
    const a = await app({ secureCookie: true });
    expect(await cookieOf(a, '127.0.0.1')).toContain('; Secure');
    const out = await a.inject({ method: 'POST', url: '/logout' });
    expect(String(out.headers['set-cookie'])).toContain('; Secure');
  });

  it('is told so by api.secureCookie, --secure-cookie or WQD_SECURE_COOKIE; off by default', () => {
    const target = ['http://127.0.0.1:1/metrics'];
    expect(resolveServiceConfig({ flags: { target }, env: {} }).secureCookie).toBe(false);
    expect(resolveServiceConfig({ flags: { target, secureCookie: true }, env: {} }).secureCookie).toBe(true);
    expect(resolveServiceConfig({ flags: { target }, env: { WQD_SECURE_COOKIE: 'true' } }).secureCookie).toBe(true);
    const file = { path: 'config.yaml', text: 'api:\n  secureCookie: true\n' };
    expect(resolveServiceConfig({ flags: { target }, env: {}, file }).secureCookie).toBe(true);
  });
});

describe('a short API token', () => {
  const tokenFile = (token: string): string => {
    const dir = mkdtempSync(join(tmpdir(), 'wqd-sign-in-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'token'), `${token}\n`);
    return join(dir, 'token');
  };

  it('is refused at start, naming where it was set', async () => {
    const file = tokenFile('fifteen-bytes!!');
    const refusal = async (inputs: Parameters<typeof resolveServiceConfig>[0]): Promise<unknown> =>
      createServiceRuntime(resolveServiceConfig(inputs), { processMetrics: false }).then(
        async (runtime) => {
          await runtime.close();
          return undefined;
        },
        (error: unknown) => error,
      );
    const fromFlag = await refusal({ flags: { apiTokenFile: file, target: ['http://127.0.0.1:1/metrics'] }, env: {} });
    expect(fromFlag).toBeInstanceOf(ConfigError);
    expect((fromFlag as Error).message).toMatch(
      /^--api-token-file: .*the API token is 15 bytes long; it must be at least 16/,
    );
    const fromEnv = await refusal({
      flags: { target: ['http://127.0.0.1:1/metrics'] },
      env: { WQD_API_TOKEN_FILE: file },
    });
    expect((fromEnv as Error).message).toMatch(/^WQD_API_TOKEN_FILE: .*15 bytes long/);
    const accepted = await refusal({
      flags: { apiTokenFile: tokenFile('sixteen-bytes!!!'), target: ['http://127.0.0.1:1/metrics'] },
      env: {},
    });
    expect(accepted).toBeUndefined();
  });

  it('is refused by the app itself', async () => {
    await expect(app({ apiToken: 'short' })).rejects.toThrow(/5 bytes long; it must be at least 16/);
  });
});

describe('the request log', () => {
  it('holds no token at debug level, wherever a client puts it', async () => {
    const lines: string[] = [];
    const a = await app({ logger: capturingLogger(lines), report: await mixedReport() });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const urls = [
      `/api/v1/diagnosis?token=${TOKEN}`,
      `/api/v1/diagnosis?status=ok&access_token=${encodeURIComponent(TOKEN)}`,
      `/?Token=${TOKEN}`,
      `/api/v1/queues/${TOKEN}`,
      `/no/such/route?api_key=${TOKEN}`,
    ];
    const statuses: number[] = [];
    for (const url of urls) statuses.push((await a.inject({ method: 'GET', url, headers: bearer })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 404, 404]);
    await signIn(a, TOKEN);
    await a.close();
    const requestLines = lines.filter((line) => line.includes('"msg":"request"'));
    expect(requestLines).toHaveLength(urls.length + 1);
    expect(requestLines.join('')).toContain('<secret>');
    expect(requestLines.join('')).toContain('status=ok');
    expect(lines.join('')).not.toContain(TOKEN);
    expect(lines.join('')).not.toContain(encodeURIComponent(TOKEN));
  });
});
