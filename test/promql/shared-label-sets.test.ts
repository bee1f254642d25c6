/**
 * Label sets shared by content: equal contents give one object, whatever the order of their labels, and the
 * content key is the signature over every name. Derived label sets of different series with the same content are
 * that one object.
 */
import { describe, expect, it } from 'vitest';
import { makeLabels } from '../../src/exposition/labels.js';
import { labelsOnly, labelsWithout, signatureOf, signatureWithoutOf } from '../../src/promql/derived-labels.js';
import { contentKey, SharedLabelSets } from '../../src/promql/shared-label-sets.js';
import { signature, signatureWithout } from '../../src/promql/vector.js';

const bucket = (le: string) =>
  makeLabels([
    ['__name__', 'workqueue_queue_duration_seconds_bucket'],
    ['job', 'manager'],
    ['instance', 'p0:8080'],
    ['name', 'pods'],
    ['le', le],
  ]);

describe('shared label sets', () => {
  it('give one object per content, in any order', () => {
    const table = new SharedLabelSets();
    const first = { job: 'manager', name: 'pods' };
    expect(table.shared(first).labels).toBe(first);
    expect(table.shared({ name: 'pods', job: 'manager' }).labels).toBe(first);
    expect(table.shared({ job: 'manager', name: 'nodes' }).labels).not.toBe(first);
    expect(table.shared({ job: 'manager' }).labels).not.toBe(first);
    expect(table.size).toBe(3);
  });

  it('key a content as the signature over every name, the metric name and le included', () => {
    const labels = bucket('0.5');
    const names = Object.keys(labels);
    expect(contentKey(labels)).toBe(signature(labels, names));
    expect(contentKey({ name: 'pods', le: '1', job: 'manager' })).toBe(
      contentKey({ job: 'manager', name: 'pods', le: '1' }),
    );
    expect(contentKey({})).toBe('');
  });

  it('are what different series derive when the derivations are equal', () => {
    const a = bucket('0.5');
    const b = bucket('1');
    expect(labelsWithout(a, ['le'])).toBe(labelsWithout(b, ['le']));
    expect(labelsOnly(a, ['name', 'job'])).toBe(labelsOnly(b, ['job', 'name']));
    expect(labelsWithout(a, ['name'])).not.toBe(labelsWithout(b, ['name']));
    expect(signatureOf(a, ['name', 'job'])).toBe(signature(b, ['name', 'job']));
    expect(signatureWithoutOf(a, ['le'])).toBe(signatureWithout(b, ['le']));
    // A name given twice is in the signature twice, as `signature` puts it.
    expect(signatureOf(a, ['name', 'name'])).toBe(signature(a, ['name', 'name']));
  });
});
