/**
 * Hostile HTTP requests to the service: the raw bytes a client sends on a fresh connection, each with the answers
 * the service must give (in order, for a request followed by a pipelined one), grouped as the abuse phases of
 * `bench/load.ts`, which floods the running service with them; `test/server/abuse.test.ts` asserts every answer.
 *
 * Contract:
 * - Every request asks for `Connection: close` or is one the server refuses and closes, so an exchange ends when
 *   the server closes the connection (under a flood the server, not the client, keeps the closed connections'
 *   TIME_WAIT).
 * - The expected answers hold for any instance of the service without an API token: the test app and the built CLI.
 * - `exchange` writes the bytes, reads until the server closes (or nothing arrives for the timeout) and parses
 *   every answer; `describeAnswer` reduces one to its status and error code, the terms of `ExpectedAnswer`.
 * - `holdSlowClients` opens connections that send a request line and then, if asked, one header line per tick,
 *   never the end of the headers (slowloris), and reports how each connection ended.
 * - No answer may contain `FILE_MARKERS` (text of files on the machine) or `ECHO_MARKER` (sent in a cookie):
 *   `revealed` names the one it contains.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { ApiErrorCode } from '../src/server/errors.js';

export type ExpectedAnswer = { readonly status: number; readonly code?: ApiErrorCode };

export type HostileRequest = {
  readonly name: string;
  /** What the client sends, one character per byte (latin1). */
  readonly bytes: string;
  readonly answers: readonly ExpectedAnswer[];
};

export type HostilePhase = { readonly name: string; readonly requests: readonly HostileRequest[] };

/** Text of `package.json` and `/etc/passwd`: a traversal that reached a file would show one of these. */
export const FILE_MARKERS = ['"devDependencies"', 'root:x:0:0'] as const;
/** Sent in a cookie with every request of another method than GET: no answer may reflect it (TRACE). */
export const ECHO_MARKER = 'wqd-echo-marker-7f3a';

const OK: ExpectedAnswer = { status: 200 };
const BAD_REQUEST: ExpectedAnswer = { status: 400, code: 'bad_request' };
const NOT_FOUND: ExpectedAnswer = { status: 404, code: 'not_found' };
const QUEUE_NOT_FOUND: ExpectedAnswer = { status: 404, code: 'queue_not_found' };
const PAYLOAD_TOO_LARGE: ExpectedAnswer = { status: 413, code: 'payload_too_large' };
const HEADERS_TOO_LARGE: ExpectedAnswer = { status: 431, code: 'headers_too_large' };

/** A request with `headers` (each without its CRLF), `Connection: close`, then `body` as it is. */
export function rawRequest(method: string, target: string, headers: readonly string[] = [], body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, 'Connection: close'];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** A request with a body framed by `Content-Length`. */
function withBody(method: string, target: string, body: string, headers: readonly string[] = []): string {
  return rawRequest(method, target, [...headers, `Content-Length: ${body.length}`], body);
}

const KB = 1024;
const PARAMETERS = 10_000;
const NOT_GET = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'] as const;
const NOT_GET_ROUTES = ['/api/v1/diagnosis', '/api/v1/queues/pod', '/healthz', '/'] as const;
/** A request for a route that does not exist, sent as the body of a GET. */
const SMUGGLED = 'GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

export const HOSTILE_PHASES: readonly HostilePhase[] = [
  {
    name: '100 KB URLs',
    requests: [
      {
        name: 'a 100 KB queue id of encoded ../',
        bytes: rawRequest('GET', `/api/v1/queues/${'%2e%2e%2f'.repeat(11_400)}etc%2fpasswd`),
        answers: [HEADERS_TOO_LARGE],
      },
      {
        name: 'a 100 KB query string',
        bytes: rawRequest('GET', `/api/v1/diagnosis?status=${'ok,'.repeat(34_200)}ok`),
        answers: [HEADERS_TOO_LARGE],
      },
      { name: 'a 100 KB path', bytes: rawRequest('GET', `/${'a'.repeat(100 * KB)}`), answers: [HEADERS_TOO_LARGE] },
      {
        name: 'a 15 KB queue id: within the 16 KiB of headers, over the 1,024 characters of an id',
        bytes: rawRequest('GET', `/api/v1/queues/${'q'.repeat(15 * KB)}`),
        answers: [BAD_REQUEST],
      },
    ],
  },
  {
    name: '10,000 query parameters',
    requests: [
      {
        name: '10,000 distinct parameters',
        bytes: rawRequest('GET', `/api/v1/diagnosis?${numbered(PARAMETERS, (i) => `p${i}=${i}`).join('&')}`),
        answers: [HEADERS_TOO_LARGE],
      },
      {
        name: 'status=ok 10,000 times',
        bytes: rawRequest('GET', `/api/v1/diagnosis?${numbered(PARAMETERS, () => 'status=ok').join('&')}`),
        answers: [HEADERS_TOO_LARGE],
      },
      {
        name: '10,000 of the shortest parameter (a&a&…, 20 KB) on /healthz',
        bytes: rawRequest('GET', `/healthz?${numbered(PARAMETERS, () => 'a').join('&')}`),
        answers: [HEADERS_TOO_LARGE],
      },
    ],
  },
  {
    name: 'path traversal in /api/v1/queues/{id}',
    requests: [
      {
        name: '../../../package.json as it is',
        bytes: rawRequest('GET', '/api/v1/queues/../../../package.json'),
        answers: [NOT_FOUND],
      },
      { name: 'the id ..', bytes: rawRequest('GET', '/api/v1/queues/..'), answers: [QUEUE_NOT_FOUND] },
      {
        name: 'the id .. encoded (%2e%2e)',
        bytes: rawRequest('GET', '/api/v1/queues/%2e%2e'),
        answers: [QUEUE_NOT_FOUND],
      },
      {
        name: 'all encoded (%2e%2e%2f)',
        bytes: rawRequest('GET', '/api/v1/queues/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'slashes encoded (..%2f)',
        bytes: rawRequest('GET', '/api/v1/queues/..%2f..%2f..%2fpackage.json'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'encoded twice (..%252f)',
        bytes: rawRequest('GET', '/api/v1/queues/..%252f..%252fpackage.json'),
        answers: [BAD_REQUEST],
      },
      { name: 'an encoded NUL (%00)', bytes: rawRequest('GET', '/api/v1/queues/pod%00.json'), answers: [BAD_REQUEST] },
      {
        name: 'backslashes as they are',
        bytes: rawRequest('GET', '/api/v1/queues/..\\..\\..\\package.json'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'backslashes encoded (%5c)',
        bytes: rawRequest('GET', '/api/v1/queues/..%5c..%5c..%5cpackage.json'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'overlong UTF-8 for ../ (%c0%ae%c0%ae%c0%af)',
        bytes: rawRequest('GET', '/api/v1/queues/%c0%ae%c0%ae%c0%afpackage.json'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'a malformed percent-encoding (%zz)',
        bytes: rawRequest('GET', '/api/v1/queues/%zz'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'from the page assets (/assets/..%2f)',
        bytes: rawRequest('GET', '/assets/..%2f..%2fpackage.json'),
        answers: [NOT_FOUND],
      },
      {
        name: 'from the API docs static files (/docs/static/../)',
        bytes: rawRequest('GET', '/docs/static/../../../../../../etc/passwd'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'from the API docs static files (/docs/static/..%5c)',
        bytes: rawRequest('GET', '/docs/static/..%5c..%5c..%5cpackage.json'),
        answers: [BAD_REQUEST],
      },
      {
        name: 'from the root (/../../etc/passwd)',
        bytes: rawRequest('GET', '/../../etc/passwd'),
        answers: [NOT_FOUND],
      },
    ],
  },
  {
    name: 'methods other than GET',
    requests: [
      ...NOT_GET.flatMap((method) =>
        NOT_GET_ROUTES.map((route) => ({
          name: `${method} ${route}`,
          bytes: rawRequest(method, route, [
            `Cookie: session=${ECHO_MARKER}`,
            ...(method === 'OPTIONS'
              ? ['Origin: https://elsewhere.example', 'Access-Control-Request-Method: GET']
              : []),
          ]),
          answers: [NOT_FOUND],
        })),
      ),
      {
        name: 'PUT with a 100 KB JSON body (over the 16 KiB body limit)',
        bytes: withBody('PUT', '/api/v1/diagnosis', `"${'b'.repeat(100 * KB)}"`, ['Content-Type: application/json']),
        answers: [PAYLOAD_TOO_LARGE],
      },
      { name: 'HEAD /healthz (GET without the body)', bytes: rawRequest('HEAD', '/healthz'), answers: [OK] },
    ],
  },
  {
    name: 'oversized headers',
    requests: [
      {
        name: '3,000 small headers (24 KB in all)',
        bytes: rawRequest(
          'GET',
          '/healthz',
          numbered(3_000, (i) => `X-Filler-${i}: v`),
        ),
        answers: [HEADERS_TOO_LARGE],
      },
      {
        name: 'a 20 KB cookie on the page',
        bytes: rawRequest('GET', '/', [`Cookie: wqd_session=${'c'.repeat(20 * KB)}`]),
        answers: [HEADERS_TOO_LARGE],
      },
      {
        name: 'a 20 KB bearer token on the API',
        bytes: rawRequest('GET', '/api/v1/diagnosis', [`Authorization: Bearer ${'t'.repeat(20 * KB)}`]),
        answers: [HEADERS_TOO_LARGE],
      },
      {
        // Node 22 refuses 1,000 such headers (about 10 KB) where Node 20 takes 2,000; 500 pass on both.
        name: '500 small headers (5 KB in all, within the limit)',
        bytes: rawRequest(
          'GET',
          '/healthz',
          numbered(500, (i) => `X-${i}: v`),
        ),
        answers: [OK],
      },
    ],
  },
  {
    name: 'a body on GET',
    requests: [
      {
        name: 'a JSON body that reads like a filter',
        bytes: withBody('GET', '/api/v1/diagnosis', '{"status":["critical"]}', ['Content-Type: application/json']),
        answers: [OK],
      },
      {
        name: 'malformed JSON',
        bytes: withBody('GET', '/healthz', '{"status":', ['Content-Type: application/json']),
        answers: [OK],
      },
      {
        name: 'a 100 KB body (over the 16 KiB body limit)',
        bytes: withBody('GET', '/healthz', 'b'.repeat(100 * KB), ['Content-Type: application/octet-stream']),
        answers: [OK],
      },
      {
        name: 'a chunked body',
        bytes: rawRequest('GET', '/healthz', ['Transfer-Encoding: chunked'], '5\r\nhello\r\n0\r\n\r\n'),
        answers: [OK],
      },
      {
        name: 'a body that is a request, then a pipelined request',
        bytes:
          `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}` +
          rawRequest('GET', '/readyz'),
        answers: [OK, OK],
      },
      {
        name: 'both Content-Length and Transfer-Encoding',
        bytes: rawRequest(
          'GET',
          '/healthz',
          ['Content-Length: 5', 'Transfer-Encoding: chunked'],
          `0\r\n\r\n${SMUGGLED}`,
        ),
        answers: [BAD_REQUEST],
      },
    ],
  },
];

function numbered(count: number, item: (i: number) => string): string[] {
  return Array.from({ length: count }, (_, i) => item(i));
}

export type Answer = {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
};

export type Exchange = {
  /** The answers received, in order. */
  readonly answers: readonly Answer[];
  /** A socket error (ECONNRESET once the server refused a request still being sent, ECONNREFUSED), or `timeout`. */
  readonly error?: string;
  /** From the start of the connection to its close. */
  readonly ms: number;
};

/** Sends `bytes` on a new connection to 127.0.0.1:`port` and reads until the server closes it. */
export function exchange(port: number, bytes: string, idleTimeoutMs = 30_000): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write(bytes, 'latin1'));
    socket.setTimeout(idleTimeoutMs, () => {
      error = 'timeout';
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    socket.on('close', () => {
      const answers = parseAnswers(Buffer.concat(chunks).toString('latin1'), bytes.startsWith('HEAD '));
      resolve({ answers, ...(error !== undefined ? { error } : {}), ms: performance.now() - started });
    });
  });
}

/** The HTTP/1.1 answers in `text`, one after the other; `bodiless` for answers to HEAD. */
export function parseAnswers(text: string, bodiless = false): Answer[] {
  const answers: Answer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    rest = rest.slice(headEnd + 4);
    let body = '';
    if (bodiless) {
      body = '';
    } else if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        const size = Number.parseInt(rest.slice(0, lineEnd), 16);
        if (lineEnd < 0 || Number.isNaN(size)) break;
        rest = rest.slice(lineEnd + 2);
        if (size === 0) {
          rest = rest.slice(rest.indexOf('\r\n') + 2);
          break;
        }
        body += rest.slice(0, size);
        rest = rest.slice(size + 2);
      }
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    } else {
      body = rest;
      rest = '';
    }
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body });
  }
  return answers;
}

/** The first of `FILE_MARKERS` and `ECHO_MARKER` that `answer`'s body contains, if any. */
export function revealed(answer: Answer): string | undefined {
  return [...FILE_MARKERS, ECHO_MARKER].find((marker) => answer.body.includes(marker));
}

/** An answer as an `ExpectedAnswer`: its status, with the code when the body is an error body. */
export function describeAnswer(answer: Answer): ExpectedAnswer {
  let code: unknown;
  try {
    code = (JSON.parse(answer.body) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    code = undefined;
  }
  return typeof code === 'string' ? { status: answer.status, code: code as ApiErrorCode } : { status: answer.status };
}

export type SlowClientEnd = {
  /** What the server answered before closing, if anything. */
  readonly answer?: Answer;
  /** `server`: the server closed the connection; `client`: `release()` did; `error`: it failed. */
  readonly closedBy: 'server' | 'client' | 'error';
  /** From the connection's start to its close. */
  readonly heldMs: number;
};

export type SlowClients = {
  /** Settles once every client has connected and sent its request line (or failed to connect). */
  readonly connected: Promise<void>;
  /** The clients whose connection is still open. */
  open(): number;
  /** Settles once every connection is closed, with how each ended. */
  readonly ended: Promise<readonly SlowClientEnd[]>;
  /** Closes the connections still open and stops trickling. */
  release(): void;
};

/**
 * `count` connections to 127.0.0.1:`port` that send `GET <target> HTTP/1.1` and its Host header, then one more
 * header line every `trickleEveryMs` on each (never, without it), and never the blank line that ends the headers.
 */
export function holdSlowClients(
  port: number,
  count: number,
  options: { readonly trickleEveryMs?: number; readonly target?: string } = {},
): SlowClients {
  /** Every open connection; those that have sent their request line also in `trickling`. */
  const sockets = new Set<net.Socket>();
  const trickling = new Set<net.Socket>();
  const ends: SlowClientEnd[] = [];
  let released = false;
  let settled = 0;
  let tick = 0;
  let markConnected: () => void = () => {};
  let markEnded: (ends: readonly SlowClientEnd[]) => void = () => {};
  const connected = new Promise<void>((resolve) => {
    markConnected = resolve;
  });
  const ended = new Promise<readonly SlowClientEnd[]>((resolve) => {
    markEnded = resolve;
  });
  const trickle =
    options.trickleEveryMs === undefined
      ? undefined
      : setInterval(() => {
          tick += 1;
          for (const socket of trickling) socket.write(`X-Slow-${tick}: ${tick}\r\n`);
        }, options.trickleEveryMs);
  const settle = (): void => {
    settled += 1;
    if (settled === count) markConnected();
  };
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let failed = false;
    let connecting = true;
    const socket = net.connect({ port, host: '127.0.0.1' }, () => {
      connecting = false;
      socket.write(`GET ${options.target ?? '/healthz'} HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
      trickling.add(socket);
      settle();
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {
      failed = true;
    });
    socket.on('close', () => {
      sockets.delete(socket);
      trickling.delete(socket);
      if (connecting) settle();
      const [answer] = parseAnswers(Buffer.concat(chunks).toString('latin1'));
      ends.push({
        ...(answer !== undefined ? { answer } : {}),
        closedBy: released ? 'client' : failed ? 'error' : 'server',
        heldMs: performance.now() - started,
      });
      if (ends.length === count) {
        clearInterval(trickle);
        markEnded(ends);
      }
    });
    sockets.add(socket);
  }
  return {
    connected,
    open: () => count - ends.length,
    ended,
    release() {
      released = true;
      clearInterval(trickle);
      for (const socket of sockets) socket.destroy();
    },
  };
}
