/**
 * Derived label sets and signatures are remembered on the label set they come from: the same object or string
 * each time, equal to what the plain functions compute; the label set itself is left untouched.
 */
import { describe, expect, it } from 'vitest';
import { makeLabels, onlyLabels, withoutLabels } from '../../src/exposition/labels.js';
import {
  groupKeyOf,
  labelsOnly,
  labelsWithout,
  signatureOf,
  signatureWithoutOf,
  withoutMetricName,
} from '../../src/promql/derived-labels.js';
import { groupKey, signature, signatureWithout } from '../../src/promql/vector.js';

const series = () =>
  makeLabels([
    ['__name__', 'workqueue_queue_duration_seconds_bucket'],
    ['job', 'manager'],
    ['instance', 'p0:8080'],
    ['name', 'pods'],
    ['le', '0.5'],
  ]);

describe('derived labels', () => {
  it('equal what the plain functions compute', () => {
    const labels = series();
    expect(labelsWithout(labels, ['le'])).toEqual(withoutLabels(labels, ['le']));
    expect(labelsOnly(labels, ['name', 'job'])).toEqual(onlyLabels(labels, ['name', 'job']));
    expect(withoutMetricName(labels)).toEqual(withoutLabels(labels, ['__name__']));
    expect(signatureOf(labels, ['name', 'job'])).toBe(signature(labels, ['name', 'job']));
    expect(signatureWithoutOf(labels, ['le'])).toBe(signatureWithout(labels, ['le']));
    expect(groupKeyOf(labels)).toBe(groupKey(labels));
  });

  it('are the same objects each time, for name lists with the same content', () => {
    const labels = series();
    const first = labelsWithout(labels, ['le']);
    expect(labelsWithout(labels, ['le'])).toBe(first);
    expect(labelsOnly(labels, ['name'])).toBe(labelsOnly(labels, ['name']));
    expect(withoutMetricName(labels)).toBe(withoutMetricName(labels));
    // What is derived from a derived set is remembered too.
    expect(withoutMetricName(first)).toBe(withoutMetricName(labelsWithout(labels, ['le'])));
    // Different name lists, different results.
    expect(labelsWithout(labels, ['name'])).not.toEqual(first);
    // A set without a metric name is its own.
    const unnamed = makeLabels([['name', 'pods']]);
    expect(withoutMetricName(unnamed)).toBe(unnamed);
  });

  it('leave no trace on the label set', () => {
    const labels = series();
    const untouched = series();
    labelsWithout(labels, ['le']);
    signatureOf(labels, ['name']);
    groupKeyOf(labels);
    expect(Object.keys(labels)).toEqual(Object.keys(untouched));
    expect(JSON.stringify(labels)).toBe(JSON.stringify(untouched));
    expect({ ...labels }).toEqual({ ...untouched });
    expect(labels).toStrictEqual(untouched);
  });

  it('are remembered for a frozen label set too', () => {
    const labels = Object.freeze(series());
    expect(labelsWithout(labels, ['le'])).toEqual(withoutLabels(labels, ['le']));
    expect(labelsWithout(labels, ['le'])).toBe(labelsWithout(labels, ['le']));
    expect(groupKeyOf(labels)).toBe(groupKey(labels));
  });
});
