/**
 * Every sentence a rule or observation prints is true of the evidence printed beside it. Every simulator
 * scenario runs on both queues (short virtual runs, one seed), is diagnosed at two times, and each text of each
 * finding and observation is checked against its own evidence by explicit rules over the words and the values:
 * a direction word against the sign and size of the slope it names, "drains in" only with a falling depth,
 * "track the adds" only with a rate in the band the hot-loop rule compares, and so on. The rules read the text
 * and the evidence only; they never call a text function again.
 */
import { describe, expect, it } from 'vitest';
import { round } from '../../src/diagnosis/format.js';
import { highAddRateLowDepth } from '../../src/diagnosis/observations/high-add-rate-low-depth.js';
import { defaultThresholds } from '../../src/diagnosis/rule.js';
import { backlog } from '../../src/diagnosis/rules/backlog.js';
import { hotLoop } from '../../src/diagnosis/rules/hot-loop.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import type { SignalValue } from '../../src/diagnosis/units.js';
import { diagnoseSource } from '../../src/service/diagnose-source.js';
import { QUEUE_KINDS, runVirtual, SCENARIO_NAMES } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';

const MINUTE = 60_000;
/** Long enough for every rule's `for` and windows but the longest; diagnosed at its end and part-way. */
const DURATION_MS = 20 * MINUTE;
const JUDGED_AT_MS = [12 * MINUTE, DURATION_MS];

type Evidence = Readonly<Record<string, SignalValue>>;
/** One printed text with the evidence printed beside it. */
type Printed = { readonly where: string; readonly text: string; readonly evidence: Evidence };

const HOT_LOOP = defaultThresholds(hotLoop);
const BACKLOG = defaultThresholds(backlog);

function value(evidence: Evidence, id: string): number | undefined {
  const entry = evidence[id];
  return entry === undefined || entry.value === null ? undefined : entry.value;
}

/** A number as printed: "6.95/s" → 6.95; "1.2k" is never printed (no SI prefixes on rates). */
function printed(text: string): number {
  return Number(text);
}

/** The slope a phrase names, by the words before its direction word. */
const SLOPE_SUBJECTS: readonly { readonly pattern: RegExp; readonly signal: string }[] = [
  { pattern: /priority 0 and above (?:is )?$/, signal: 'normalPriorityDepthSlope' },
  { pattern: /half an hour its depth is $/, signal: 'depthTrend' },
  { pattern: /depth at low priority is $/, signal: 'lowPriorityDepthSlope' },
  {
    pattern:
      /(?:^|\W)(?:[Dd]epth [\d.]+ items?, |its depth is |the whole depth, [\d.]+ items?, is |A list of [\d.]+ items? is |depth is no longer falling \()$/,
    signal: 'depthSlope',
  },
];

/** Problems of one printed text, each a sentence naming the claim and the evidence that contradicts it. */
function problemsOf({ text, evidence }: Printed): string[] {
  const problems: string[] = [];
  const v = (id: string): number | undefined => value(evidence, id);

  // Direction words: "growing N/s" and "falling N/s" name a slope in the evidence, of that sign and size.
  for (const match of text.matchAll(/(growing|falling) ([\d.]+)\/s/g)) {
    const before = text.slice(0, match.index);
    const subject = SLOPE_SUBJECTS.find((s) => s.pattern.test(before));
    if (subject === undefined) {
      problems.push(`"${match[0]}" names no slope the checks know (before it: "${before.slice(-40)}")`);
      continue;
    }
    const slope = v(subject.signal);
    if (slope === undefined) {
      problems.push(`"${match[0]}" but ${subject.signal} is not in the evidence`);
      continue;
    }
    const sign = match[1] === 'growing' ? 1 : -1;
    if (Math.sign(slope) !== sign) problems.push(`"${match[0]}" but ${subject.signal} is ${slope}`);
    if (round(Math.abs(slope)) !== match[2]) problems.push(`"${match[0]}" but |${subject.signal}| is ${slope}`);
  }
  // A list drains at the trend window's slope, or at the last five minutes' while the trend window's does not fall
  // yet (a burst whose rise it still holds).
  const drainSlope = (v('depthSlope') ?? 0) < 0 ? 'depthSlope' : 'recentDepthSlope';
  const drainingAt = text.match(/is draining at ([\d.]+)\/s/);
  if (drainingAt !== null && !((v(drainSlope) ?? 0) < 0 && round(-(v(drainSlope) ?? 0)) === drainingAt[1]))
    problems.push(`"${drainingAt[0]}" but ${drainSlope} is ${v(drainSlope)}`);
  if (/holding steady/.test(text) && round(v('depthSlope') ?? Number.NaN) !== '0')
    problems.push(`"holding steady" but depthSlope is ${v('depthSlope')}`);

  // Draining: a finite time only while the depth falls and nothing served first grows.
  if (/drains in|empty in about/.test(text)) {
    const slope = /empty in about/.test(text) ? v(drainSlope) : v('depthSlope');
    const normal = v('normalPriorityDepthSlope');
    if (slope === undefined || slope >= 0) problems.push(`a time to drain, but depthSlope is ${slope}`);
    if (normal !== undefined && normal > 0 && round(normal) !== '0')
      problems.push(`a time to drain, but the depth at priority 0 and above grows ${normal}/s`);
    if (v('timeToDrain') === undefined) problems.push('a time to drain, but timeToDrain is not in the evidence');
  }
  if (/not draining/.test(text) && v('timeToDrain') !== undefined)
    problems.push(`"not draining" but timeToDrain is ${v('timeToDrain')}`);
  if (/is draining|drains in/.test(text) && (v(/is draining/.test(text) ? drainSlope : 'depthSlope') ?? 0) >= 0)
    problems.push(`draining, but depthSlope is ${v('depthSlope')}`);

  // "For the whole period": no signal shows what held over a `for`; the texts speak of what the evidence shows.
  if (/whole evaluation period|for the whole period/.test(text)) problems.push('a claim about the whole period');
  const floor = text.match(/did not drain in the last minute \(never below ([\d.]+) items?\)/);
  if (floor !== null && round(v('depthFloor') ?? Number.NaN) !== floor[1])
    problems.push(`"${floor[0]}" but depthFloor is ${v('depthFloor')}`);

  // Tracking: a rate tracks the adds when it lies in the band the hot-loop rule compares, between the medians of
  // the window it reads.
  const adds = v('addRate');
  const medianAdds = v('addRateMedian');
  const inWriteBand = (rate: number | undefined): boolean =>
    rate !== undefined &&
    medianAdds !== undefined &&
    rate >= HOT_LOOP.minWriteRatio * medianAdds &&
    rate <= HOT_LOOP.maxWriteRatio * medianAdds;
  if (/failed API writes track the adds/.test(text) && !inWriteBand(v('failedWriteRateMedian')))
    problems.push(
      `failed writes "track the adds" but failedWriteRateMedian ${v('failedWriteRateMedian')}, addRateMedian ${medianAdds}`,
    );
  if (/\/s API writes track the adds/.test(text) && !inWriteBand(v('writeRateMedian')))
    problems.push(`writes "track the adds" but writeRateMedian ${v('writeRateMedian')}, addRateMedian ${medianAdds}`);
  if (/do(?:es)? not track/.test(text)) problems.push('"do not track" without the band it compares printed');
  if (/without backoff \(/.test(text)) {
    const retries = v('retryRate');
    const errors = v('requeuedErrorRate');
    const base = /reconcile errors are requeued/.test(text) ? errors : medianAdds;
    if (retries === undefined || base === undefined || retries > HOT_LOOP.maxRetryPerError * base)
      problems.push(`"without backoff" but retryRate ${retries} against ${base}`);
  }
  if (/failed requests outnumber the adds/.test(text) && !((v('failedRequestRate') ?? 0) >= (adds ?? Infinity)))
    problems.push(
      `failed requests "outnumber the adds" but failedRequestRate ${v('failedRequestRate')}, addRate ${adds}`,
    );
  if (/failed API requests/.test(text) && evidence.failedRequestRate === undefined)
    problems.push('failed requests named, but failedRequestRate is not in the evidence');

  // Workers: "too slow or too few" only with busy workers, "most workers are idle" only with idle ones.
  const busy = v('busyWorkers');
  const max = v('maxWorkers');
  if (busy !== undefined && max !== undefined && max > 0) {
    const share = busy / max;
    if (/Syncs are too slow or too few/.test(text) && share < BACKLOG.targetUtilization)
      problems.push(`"too slow or too few" but ${busy} of ${max} workers busy`);
    if (/most workers are idle/.test(text) && share >= BACKLOG.targetUtilization)
      problems.push(`"most workers are idle" but ${busy} of ${max} workers busy`);
  }
  // A value that is missing is the subject of no claim ("n/a (metric absent) reconcile errors are requeued").
  const claimOnMissing = text.match(/n\/a \([^)]*\) [\w ]+? (?:are|is|track)\b/);
  if (claimOnMissing !== null) problems.push(`a claim about a missing value: "${claimOnMissing[0]}"`);
  // Retries: "retried with backoff at N/s" only with retries counted.
  const retried = text.match(/retried with backoff at ([\d.]+)\/s/);
  if (retried !== null && !(printed(retried[1]!) > 0)) problems.push(`"${retried[0]}" with no retries`);
  return problems;
}

/** Every text of every finding and observation of `scenario` on `queue`, at each judged time. */
async function printedTexts(scenario: string, queue: (typeof QUEUE_KINDS)[number]): Promise<Printed[]> {
  const run = await runVirtual(scenario, { queue, durationMs: DURATION_MS });
  const source = recordingSourceFromText(run.recording.text(), `${scenario}.om`);
  const out: Printed[] = [];
  try {
    const range = source.dataRange();
    if (range === undefined) throw new Error(`${scenario}: empty recording`);
    for (const atMs of JUDGED_AT_MS) {
      const report = await diagnoseSource(source, {
        atMs: Math.min(range.startMs + atMs, range.endMs),
        runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL,
      });
      for (const q of report.queues) {
        const at = `${q.queue.name ?? q.queue.target} at ${atMs / MINUTE}m`;
        for (const f of q.findings) {
          for (const [part, text] of [
            ['summary', f.summary],
            ['cause', f.cause],
            ['fix', f.fix],
          ] as const)
            out.push({ where: `${f.rule} ${part}, ${at}`, text, evidence: f.evidence });
        }
        for (const o of q.observations) out.push({ where: `${o.id}, ${at}`, text: o.summary, evidence: o.evidence });
      }
    }
  } finally {
    await source.close();
  }
  return out;
}

describe('every text agrees with the evidence printed beside it', () => {
  it.each(SCENARIO_NAMES.flatMap((scenario) => QUEUE_KINDS.map((queue) => [scenario, queue] as const)))(
    '%s on the %s queue',
    async (scenario, queue) => {
      const problems = (await printedTexts(scenario, queue)).flatMap((p) =>
        problemsOf(p).map((problem) => `${p.where}: ${problem}\n  text: ${p.text}`),
      );
      expect(problems).toEqual([]);
    },
  );
});

describe('the checks catch the known contradictions', () => {
  const v = (value: number, unit: SignalValue['unit']): SignalValue => ({ value, unit });
  it('a falling depth called growing, and a drain time while priority-0 keys back up', () => {
    const evidence = {
      depth: v(38992, 'items'),
      depthSlope: v(-13.1, '1/s'),
      normalPriorityDepthSlope: v(6.15, '1/s'),
      timeToDrain: v(3696, 's'),
    };
    expect(problemsOf({ where: 'x', text: 'Depth 38992 items, growing 13.1/s: drains in 61.6m.', evidence })).toEqual([
      '"growing 13.1/s" but depthSlope is -13.1',
      'a time to drain, but the depth at priority 0 and above grows 6.15/s',
    ]);
    expect(problemsOf({ where: 'x', text: 'this one has grown for the whole evaluation period.', evidence })).toEqual([
      'a claim about the whole period',
    ]);
  });

  it('"do not track" without the compared rate, and failed writes said to track that do not', () => {
    const evidence = {
      addRateMedian: v(186, '1/s'),
      failedWriteRateMedian: v(0, '1/s'),
      failedRequestRate: v(369, '1/s'),
    };
    expect(problemsOf({ where: 'x', text: 'failed requests do not track the adds', evidence })).toHaveLength(1);
    expect(problemsOf({ where: 'x', text: '0/s failed API writes track the adds', evidence })).toHaveLength(1);
    // The five-minute rates are not the band the rule compares: tracking claimed beside them alone is a problem.
    const fiveMinuteRates = { addRate: v(186, '1/s'), failedWriteRate: v(186, '1/s') };
    expect(
      problemsOf({ where: 'x', text: '186/s failed API writes track the adds', evidence: fiveMinuteRates }),
    ).toHaveLength(1);
    expect(
      problemsOf({ where: 'x', text: 'n/a (metric absent) reconcile errors are requeued without backoff.', evidence }),
    ).toEqual(['a claim about a missing value: "n/a (metric absent) reconcile errors are"']);
  });

  it('HighAddRateLowDepth prints the failed requests it speaks of (a loop whose every GET fails)', () => {
    expect(highAddRateLowDepth.evidence).toEqual(expect.arrayContaining(['failedRequestRate', 'failedWriteRate']));
    const evidence = {
      addRate: v(186, '1/s'),
      depthAvg: v(0.2, 'items'),
      writeRate: v(0, '1/s'),
      failedWriteRate: v(0, '1/s'),
      failedRequestRate: v(369, '1/s'),
      reconcileErrorRate: { value: null, unit: '1/s', missing: 'metric_absent' } as SignalValue,
    };
    const text = highAddRateLowDepth.text.summary({
      signals: evidence,
      thresholds: defaultThresholds(highAddRateLowDepth),
    });
    expect(text).toContain('369/s failed API requests');
    expect(text).toContain('failed requests outnumber the adds');
    expect(problemsOf({ where: 'x', text, evidence })).toEqual([]);
  });
});
