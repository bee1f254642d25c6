/**
 * A growable FIFO over a power-of-two circular array: O(1) push and shift at any depth, where
 * `Array.prototype.shift` degrades to O(n) on deep arrays. Vacated slots are cleared so shifted
 * items can be garbage collected. Capacity only grows (to the deepest backlog seen).
 */
export class RingBuffer<T> {
  private slots: (T | undefined)[];
  /** Index of the oldest element. */
  private head = 0;
  private count = 0;
  /** slots.length - 1; slots.length is a power of two. */
  private mask: number;

  constructor(initialCapacity = 16) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity *= 2;
    this.slots = new Array<T | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
  }

  get length(): number {
    return this.count;
  }

  push(value: T): void {
    if (this.count === this.slots.length) this.grow();
    this.slots[(this.head + this.count) & this.mask] = value;
    this.count++;
  }

  /** Removes and returns the oldest element; undefined when empty. */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const value = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.count--;
    return value;
  }

  /** Removes every element. */
  clear(): void {
    while (this.count > 0) this.shift();
    this.head = 0;
  }

  private grow(): void {
    const old = this.slots;
    const capacity = old.length * 2;
    const slots = new Array<T | undefined>(capacity).fill(undefined);
    for (let i = 0; i < this.count; i++) slots[i] = old[(this.head + i) & this.mask];
    this.slots = slots;
    this.head = 0;
    this.mask = capacity - 1;
  }
}
