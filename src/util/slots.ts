/**
 * A bound on how many tasks run at once: `run` starts a task when one of `size` slots is free, otherwise it
 * waits, in call order, for one to free up. A task that throws frees its slot like one that returns.
 */
export interface Slots {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running now, and tasks waiting for a slot. */
  readonly running: number;
  readonly waiting: number;
}

export function createSlots(size: number): Slots {
  if (!(Number.isInteger(size) && size > 0)) throw new RangeError(`slots must be a positive integer, got ${size}`);
  let running = 0;
  const queue: Array<() => void> = [];
  const release = (): void => {
    const next = queue.shift();
    if (next === undefined) running--;
    else next();
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (running < size) running++;
      // The slot passes from the releasing task to this one without being counted free in between.
      else await new Promise<void>((resolve) => queue.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
