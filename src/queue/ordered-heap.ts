/**
 * An indexed binary heap under a caller-given strict order: the priority queue's stand-in for the
 * B-trees of controller-runtime's priority queue (`btree.New(32, less)`), and, ordered by due time,
 * the delaying queue's and the FakeClock's timers (`min-heap.ts`).
 *
 * Why a heap suffices: the Go code only ever uses its trees in three ways: insert, delete a known
 * item, and ascend from the smallest item, stopping at the first one it can hand out (ready items)
 * or that is not due yet (waiting items). Its orders are strict total orders (an item's `addedCounter`
 * is unique), so "ascend and take the first" is "take the minimum", and a key change is delete +
 * insert. An indexed heap does each of these in O(log n) with one array and no per-node allocation.
 * The one ascent that skips items (ready items whose key is being processed) is avoided by the queue
 * keeping those items out of the heap until their key is done; see `priority-queue.ts`.
 *
 * Invariant: `entries[i].index === i` for every entry in the heap and `index === -1` for an entry
 * in no heap, which makes `remove` and `fix` O(log n) without a search. An entry is in at most one
 * heap at a time.
 */

/** What the heap needs from an entry. The heap owns `index`; the caller owns the ordered fields. */
export interface OrderedHeapEntry {
  /** Position in the heap, or -1 when in none. */
  index: number;
}

export class OrderedHeap<E extends OrderedHeapEntry> {
  private readonly entries: E[] = [];

  /** `less(a, b)`: a comes out before b. Must be a strict total order over the entries held. */
  constructor(private readonly less: (a: E, b: E) => boolean) {}

  get size(): number {
    return this.entries.length;
  }

  /** The smallest entry, left in place; undefined when empty. */
  peek(): E | undefined {
    return this.entries[0];
  }

  push(entry: E): void {
    entry.index = this.entries.length;
    this.entries.push(entry);
    this.up(entry.index);
  }

  /** Removes and returns the smallest entry; undefined when empty. */
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

  /** Restores the order after the caller changed `entry`'s ordered fields (either way). */
  fix(entry: E): void {
    const i = entry.index;
    if (i < 0 || this.entries[i] !== entry) return;
    if (!this.down(i)) this.up(i);
  }

  /** Every entry, in heap (not sorted) order. */
  values(): readonly E[] {
    return this.entries;
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

  /** Sifts entry `start` down; returns whether it moved. */
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
