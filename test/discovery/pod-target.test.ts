import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ANNOTATION, DEFAULT_POD_JOB, podTarget } from '../../src/discovery/pod-target.js';
import { STATIC_JOB, staticTargets } from '../../src/discovery/static.js';
import { sameTarget, sortTargets } from '../../src/discovery/target.js';

function pod(o: {
  phase?: string;
  ip?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ports?: Array<[string, number]>;
}): V1Pod {
  return {
    metadata: { namespace: 'mon', name: 'ctrl-0', labels: o.labels ?? {}, annotations: o.annotations ?? {} },
    spec: {
      containers: (o.ports ?? [['manager', 8080]]).map(([name, containerPort]) => ({
        name,
        ports: [{ containerPort }],
      })),
    },
    status: {
      ...(o.phase !== undefined ? { phase: o.phase } : { phase: 'Running' }),
      ...(o.ip ? { podIP: o.ip } : {}),
    },
  };
}

describe('podTarget', () => {
  it('makes a target from a Running pod with an IP and a port annotation', () => {
    const t = podTarget(
      pod({ ip: '10.0.0.7', annotations: { [ANNOTATION.port]: '8080' }, labels: { 'app.kubernetes.io/name': 'op' } }),
    );
    expect(t).toEqual({
      key: 'pod/mon/ctrl-0:8080',
      url: 'http://10.0.0.7:8080/metrics',
      labels: { namespace: 'mon', pod: 'ctrl-0', container: 'manager', job: 'op', instance: '10.0.0.7:8080' },
    });
  });

  it('skips pods that are not Running, have no IP, opt out, or have no port at all', () => {
    const port = { [ANNOTATION.port]: '8080' };
    expect(podTarget(pod({ phase: 'Pending', ip: '10.0.0.7', annotations: port }))).toBeNull();
    expect(podTarget(pod({ phase: 'Succeeded', ip: '10.0.0.7', annotations: port }))).toBeNull();
    expect(podTarget(pod({ annotations: port }))).toBeNull();
    expect(podTarget(pod({ ip: '10.0.0.7', annotations: { ...port, [ANNOTATION.scrape]: 'false' } }))).toBeNull();
    expect(podTarget(pod({ ip: '10.0.0.7' }))).toBeNull();
    expect(podTarget(pod({ ip: '10.0.0.7', annotations: { [ANNOTATION.port]: 'http' } }))).toBeNull();
  });

  it('takes path and scheme from annotations, and falls back to the defaults', () => {
    const annotated = podTarget(
      pod({
        ip: '10.0.0.7',
        ports: [
          ['manager', 9443],
          ['kube-rbac-proxy', 8443],
        ],
        annotations: { [ANNOTATION.port]: '8443', [ANNOTATION.path]: 'custom/metrics', [ANNOTATION.scheme]: 'HTTPS' },
      }),
    );
    expect(annotated?.url).toBe('https://10.0.0.7:8443/custom/metrics');
    expect(annotated?.labels['container']).toBe('kube-rbac-proxy');
    const defaulted = podTarget(pod({ ip: '10.0.0.7', ports: [['manager', 9443]] }), {
      port: 8443,
      path: '/m',
      scheme: 'https',
      job: 'fleet',
    });
    expect(defaulted).toEqual({
      key: 'pod/mon/ctrl-0:8443',
      url: 'https://10.0.0.7:8443/m',
      labels: { namespace: 'mon', pod: 'ctrl-0', job: 'fleet', instance: '10.0.0.7:8443' },
    });
  });

  it('brackets IPv6 addresses and picks the job from app.kubernetes.io/name, app, or a default', () => {
    const v6 = podTarget(pod({ ip: 'fd00::7', annotations: { [ANNOTATION.port]: '8080' }, labels: { app: 'legacy' } }));
    expect(v6?.url).toBe('http://[fd00::7]:8080/metrics');
    expect(v6?.labels['instance']).toBe('[fd00::7]:8080');
    expect(v6?.labels['job']).toBe('legacy');
    expect(podTarget(pod({ ip: '10.0.0.7', annotations: { [ANNOTATION.port]: '8080' } }))?.labels['job']).toBe(
      DEFAULT_POD_JOB,
    );
  });
});

describe('staticTargets', () => {
  it('makes one target per distinct URL, keyed and sorted by URL', () => {
    const t = staticTargets([
      'http://b.example:8080/metrics',
      'https://a.example/metrics',
      'http://b.example:8080/metrics#x',
    ]);
    expect(t).toEqual([
      {
        key: 'http://b.example:8080/metrics',
        url: 'http://b.example:8080/metrics',
        labels: { job: STATIC_JOB, instance: 'b.example:8080' },
      },
      {
        key: 'https://a.example/metrics',
        url: 'https://a.example/metrics',
        labels: { job: STATIC_JOB, instance: 'a.example:443' },
      },
    ]);
    expect(staticTargets(['http://127.0.0.1:9090/metrics'], { job: 'mine' })[0]?.labels['job']).toBe('mine');
  });

  it('rejects invalid URLs with a message naming them', () => {
    expect(() => staticTargets(['not a url'])).toThrow('invalid target URL: "not a url"');
    expect(() => staticTargets(['ftp://x/metrics'])).toThrow(/want http or https/);
  });

  it('compares and sorts targets', () => {
    const [a, b] = staticTargets(['http://a/metrics', 'http://b/metrics']);
    expect(sameTarget(a!, { ...a!, labels: { ...a!.labels } })).toBe(true);
    expect(sameTarget(a!, b!)).toBe(false);
    expect(sameTarget(a!, { ...a!, labels: { ...a!.labels, extra: '1' } })).toBe(false);
    expect(sortTargets([b!, a!]).map((t) => t.key)).toEqual([a!.key, b!.key]);
  });
});
