/** A recording replayed as if scraped: the whole file is loaded into an unbounded history at once. */
import { keepFamilies } from '../exposition/parser.js';
import { DIAGNOSTIC_FAMILIES, SCRAPE_HEALTH } from '../metrics/names.js';
import { createStoreBackend, historyStore } from '../promql/history-backend.js';
import { History } from '../store/history.js';
import { loadRecording, type Recording, readRecording } from '../store/recording.js';
import type { MetricsSource } from './source.js';
import { targetName } from './target-state.js';

export async function openRecordingSource(file: string): Promise<MetricsSource> {
  return recordingSource(await readRecording(file, recordingOptions()));
}

/** The same from recording text already in memory (`file` names targets without job/instance labels). */
export function recordingSourceFromText(text: string, file: string): MetricsSource {
  return recordingSource(loadRecording(text, file, recordingOptions()));
}

function recordingOptions() {
  return {
    history: new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY }),
    keep: keepFamilies([...DIAGNOSTIC_FAMILIES, SCRAPE_HEALTH.up]),
  };
}

function recordingSource(recording: Recording): MetricsSource {
  const history = recording.history;
  return {
    kind: 'recording',
    backend: createStoreBackend(historyStore(history)),
    targets: () =>
      history
        .targets()
        .map((t) => ({ name: targetName(t.labels) === 'unknown' ? t.id : targetName(t.labels), labels: t.labels })),
    dataRange: () =>
      recording.startMs === undefined || recording.endMs === undefined
        ? undefined
        : { startMs: recording.startMs, endMs: recording.endMs },
    close: async () => {},
  };
}
