/**
 * A target's own credentials in its label values are replaced by `<secret>` before a page is stored, on pages
 * parsed in this thread and on the parse worker; a page without them is passed on as it is.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeParseWorker, parsePage } from '../../src/exposition/parse-off-thread.js';
import { pageSamples } from '../../src/exposition/parsed-page.js';
import { withoutCredentialsInLabels } from '../../src/sources/label-credentials.js';

const TOKEN = 'planted-T0ken-echoed-back';
const PASSWORD = 'planted-passw0rd';

const PAGE = [
  '# TYPE workqueue_depth gauge',
  `workqueue_depth{name="pods",seen="Bearer ${TOKEN}"} 3`,
  `workqueue_depth{name="nodes",seen="x\\"${TOKEN}\\"y"} 4`,
  'workqueue_depth{name="plain"} 5',
  '# TYPE workqueue_adds_total counter',
  `workqueue_adds_total{name="a",who="${PASSWORD}"} 1`,
  `workqueue_adds_total{name="a",who="${TOKEN}"} 2`,
  '',
].join('\n');

afterAll(() => closeParseWorker());

describe('withoutCredentialsInLabels', () => {
  for (const where of ['inline', 'on the parse worker'] as const) {
    it(`replaces them in label values of a page parsed ${where}, merging series made equal`, async () => {
      const parsed = await parsePage(Buffer.from(PAGE), { offThreadAboveBytes: where === 'inline' ? 1e9 : 0 });
      const page = withoutCredentialsInLabels(parsed, [TOKEN, PASSWORD, 'no']);
      const samples = pageSamples(page).map((s) => ({ name: s.name, labels: s.labels, value: s.value }));
      expect(samples).toEqual([
        { name: 'workqueue_depth', labels: { name: 'pods', seen: 'Bearer <secret>' }, value: 3 },
        { name: 'workqueue_depth', labels: { name: 'nodes', seen: 'x"<secret>"y' }, value: 4 },
        { name: 'workqueue_depth', labels: { name: 'plain' }, value: 5 },
        { name: 'workqueue_adds_total', labels: { name: 'a', who: '<secret>' }, value: 1 },
        { name: 'workqueue_adds_total', labels: { name: 'a', who: '<secret>' }, value: 2 },
      ]);
      expect(page.series.count).toBe(parsed.series.count - 1);
      for (let id = 0; id < page.series.count; id++) {
        expect(page.series.key(id)).not.toContain(TOKEN);
        expect(page.series.key(id)).not.toContain(PASSWORD);
      }
    });
  }

  it('passes a page without them on as it is, and ignores credentials too short to search for', async () => {
    const parsed = await parsePage(Buffer.from('workqueue_depth{name="pods"} 3\n'));
    expect(withoutCredentialsInLabels(parsed, [TOKEN, 'pod'])).toBe(parsed);
  });
});
