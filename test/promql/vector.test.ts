/**
 * Label-set signatures: equal label sets give equal keys whatever the order their objects hold them in (the
 * store's canonical order, with `le` last, or any other), the metric name and the excluded labels never take
 * part, and empty values count as absent.
 */
import { describe, expect, it } from 'vitest';
import { signature, signatureWithout } from '../../src/promql/vector.js';

describe('signatures', () => {
  it('are the same for equal label sets in any order', () => {
    const canonical = { instance: 'a:1', job: 'j', name: 'q', le: '0.5' };
    const sorted = { instance: 'a:1', job: 'j', le: '0.5', name: 'q' };
    const shuffled = { name: 'q', le: '0.5', __name__: 'm', job: 'j', instance: 'a:1' };
    const key = signatureWithout(canonical, []);
    expect(signatureWithout(sorted, [])).toBe(key);
    expect(signatureWithout(shuffled, [])).toBe(key);
    expect(signature(shuffled, ['le', 'name', 'job', 'instance'])).toBe(key);
    expect(signature(canonical, ['instance', 'job', 'name', 'le'])).toBe(key);
  });

  it('leave out the excluded labels, the metric name and empty values', () => {
    const key = signatureWithout({ job: 'j', name: 'q' }, []);
    expect(signatureWithout({ __name__: 'm', job: 'j', name: 'q', priority: '0' }, ['priority'])).toBe(key);
    expect(signatureWithout({ job: 'j', controller: '', name: 'q' }, [])).toBe(key);
    expect(signature({ job: 'j', name: 'q', code: '200' }, ['name', 'job', 'controller'])).toBe(key);
    expect(signatureWithout({ job: 'j', name: 'r' }, [])).not.toBe(key);
    expect(signatureWithout({ job: 'j', name: 'q', le: '1' }, [])).not.toBe(key);
  });
});
