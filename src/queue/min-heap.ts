/**
 * A binary min-heap of timed entries, shared by the delaying queue (items waiting for their ready
 * time) and the FakeClock (pending timers): an `OrderedHeap` under the order below.
 *
 * Order: earliest `at` first; entries with equal `at` in increasing `seq`, so callers that hand out
 * increasing sequence numbers get first-scheduled-first-out among ties.
 */
import { OrderedHeap, type OrderedHeapEntry } from './ordered-heap.js';

/** What the heap needs from an entry. The heap owns `index`; callers own `at` and `seq`. */
export interface HeapEntry extends OrderedHeapEntry {
  /** Time (ms) the entry is due. */
  at: number;
  /** Tie-breaker among equal `at`: lower first. */
  seq: number;
}

function dueFirst(a: HeapEntry, b: HeapEntry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class MinHeap<E extends HeapEntry> extends OrderedHeap<E> {
  constructor() {
    super(dueFirst);
  }
}
