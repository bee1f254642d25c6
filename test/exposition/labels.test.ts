import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMatchers, keyLabels, keyMetricName, labelsOf, seriesKey } from '../../src/exposition/labels.js';
import { applyTargetLabels } from '../../src/store/target-labels.js';

describe('series keys', () => {
  it('orders labels by name with le and quantile last, escapes values, drops empty ones', () => {
    const key = seriesKey('m_bucket', labelsOf({ le: '0.1', name: 'q', controller: 'c', empty: '', v: 'a"b\\c\nd' }));
    expect(key).toBe('m_bucket{controller="c",name="q",v="a\\"b\\\\c\\nd",le="0.1"}');
    expect(keyMetricName(key)).toBe('m_bucket');
    expect({ ...keyLabels(key) }).toEqual({ controller: 'c', name: 'q', v: 'a"b\\c\nd', le: '0.1' });
    expect(seriesKey('up', labelsOf({}))).toBe('up');
  });

  it('decodes every key it encodes', () => {
    const name = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,6}$/);
    fc.assert(
      fc.property(name, fc.dictionary(name, fc.string({ minLength: 1 })), (metric, labels) => {
        const key = seriesKey(metric, labelsOf(labels));
        expect(keyMetricName(key)).toBe(metric);
        expect({ ...keyLabels(key) }).toEqual(labels);
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('matchers', () => {
  const match = (m: Parameters<typeof compileMatchers>[0], l: Record<string, string>) =>
    compileMatchers(m)(labelsOf(l));

  it('anchors regular expressions at both ends', () => {
    expect(match([{ label: 'a', op: '=~', value: 'b' }], { a: 'abc' })).toBe(false);
    expect(match([{ label: 'a', op: '=~', value: '.*b.*' }], { a: 'abc' })).toBe(true);
    expect(match([{ label: 'a', op: '=~', value: 'x|abc' }], { a: 'abc' })).toBe(true);
    expect(match([{ label: 'a', op: '!~', value: 'x|abc' }], { a: 'abc' })).toBe(false);
  });

  it('treats an absent label as the empty string', () => {
    expect(match([{ label: 'a', op: '=', value: '' }], {})).toBe(true);
    expect(match([{ label: 'a', op: '!=', value: '' }], {})).toBe(false);
    expect(match([{ label: 'a', op: '=~', value: '.*' }], {})).toBe(true);
  });
});

describe('target labels (honor_labels: false)', () => {
  it('adds target labels and keeps clashing scraped ones as exported_', () => {
    expect({ ...applyTargetLabels(labelsOf({ job: 'x', a: '1' }), labelsOf({ job: 'ctrl', instance: 'i' })) }).toEqual({
      a: '1',
      exported_job: 'x',
      instance: 'i',
      job: 'ctrl',
    });
  });

  it('renames shortest clashes first and never onto a taken name', () => {
    const scraped = labelsOf({ job: 'sj', instance: 'si', exported_job: 'e' });
    const target = labelsOf({ job: 'tj', instance: 'ti' });
    expect({ ...applyTargetLabels(scraped, target) }).toEqual({
      exported_exported_job: 'sj',
      exported_instance: 'si',
      exported_job: 'e',
      instance: 'ti',
      job: 'tj',
    });
  });

  it('leaves scraped labels alone without target labels', () => {
    const scraped = labelsOf({ job: 'x' });
    expect(applyTargetLabels(scraped, labelsOf({}))).toBe(scraped);
  });
});
