/**
 * A binary min-heap of timed entries, shared by the delaying queue (items waiting for their ready
 * time) and the FakeClock (pending timers).
 *
 * Order: earliest `at` first; entries with equal `at` in increasing `seq`, so callers that hand out
 * increasing sequence numbers get first-scheduled-first-out among ties.
 * Invariant: `entries[i].index === i` for every entry in the heap, and `index === -1` for an entry
 * that is not in it; this is what makes `remove` and `fix` O(log n) without a search.
 */

/** What the heap needs from an entry. The heap owns `index`; callers own `at` and `seq`. */
export interface HeapEntry {
  /** Time (ms) the entry is due. */
  at: number;
  /** Tie-breaker among equal `at`: lower first. */
  seq: number;
  /** Position in the heap, or -1 when not in a heap. */
  index: number;
}

export class MinHeap<E extends HeapEntry> {
  private readonly entries: E[] = [];

  get size(): number {
    return this.entries.length;
  }

  /** The earliest entry, left in place; undefined when empty. */
  peek(): E | undefined {
    return this.entries[0];
  }

  push(entry: E): void {
    entry.index = this.entries.length;
    this.entries.push(entry);
    this.up(entry.index);
  }

  /** Removes and returns the earliest entry; undefined when empty. */
  pop(): E | undefined {
    const top = this.entries[0];
    if (top !== undefined) this.removeAt(0);
    return top;
  }

  /** Removes `entry` if it is in this heap; a no-op otherwise. */
  remove(entry: E): void {
    const i = entry.index;
    if (i >= 0 && this.entries[i] === entry) this.removeAt(i);
  }

  /** Restores the order after the caller changed `entry.at` (either way). */
  fix(entry: E): void {
    const i = entry.index;
    if (i < 0 || this.entries[i] !== entry) return;
    if (!this.down(i)) this.up(i);
  }

  /** Empties the heap, marking every entry as out of it. */
  clear(): void {
    for (const entry of this.entries) entry.index = -1;
    this.entries.length = 0;
  }

  private removeAt(i: number): void {
    const entries = this.entries;
    const removed = entries[i]!;
    const last = entries.pop()!;
    removed.index = -1;
    if (i === entries.length) return;
    entries[i] = last;
    last.index = i;
    if (!this.down(i)) this.up(i);
  }

  private less(a: E, b: E): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private up(i: number): void {
    const entries = this.entries;
    const entry = entries[i]!;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = entries[parentIndex]!;
      if (!this.less(entry, parent)) break;
      entries[i] = parent;
      parent.index = i;
      i = parentIndex;
    }
    entries[i] = entry;
    entry.index = i;
  }

  /** Sifts entry i down; returns whether it moved. */
  private down(start: number): boolean {
    const entries = this.entries;
    const n = entries.length;
    const entry = entries[start]!;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && this.less(entries[right]!, entries[left]!)) child = right;
      const childEntry = entries[child]!;
      if (!this.less(childEntry, entry)) break;
      entries[i] = childEntry;
      childEntry.index = i;
      i = child;
    }
    entries[i] = entry;
    entry.index = i;
    return i !== start;
  }
}
