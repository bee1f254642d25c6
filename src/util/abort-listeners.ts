/**
 * Waiting on an `AbortSignal` that many operations share at once: every request of an evaluation (tens of
 * Prometheus queries in flight together) watches the evaluation's one signal. An `'abort'` listener per operation
 * would put as many listeners on that signal as there are operations in flight, and Node warns past ten
 * (`MaxListenersExceededWarning`) although nothing leaks.
 *
 * Contract: `onAbort(signal, callback)` calls `callback` once when `signal` aborts, unless the returned function
 * was called first, which forgets it. However many callbacks wait on a signal, the signal carries one `'abort'`
 * listener of this module, and none once no callback waits. A signal already aborted calls nothing: the caller
 * checks `signal.aborted` first.
 */

type Waiting = { readonly callbacks: Set<() => void>; readonly listener: () => void };

const waiting = new WeakMap<AbortSignal, Waiting>();

export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let entry = waiting.get(signal);
  if (entry === undefined) {
    const callbacks = new Set<() => void>();
    const listener = (): void => {
      waiting.delete(signal);
      for (const waiter of callbacks) waiter();
      callbacks.clear();
    };
    entry = { callbacks, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  // A callback of its own, so that the same function given twice is two waits, each forgotten by its own return.
  const own = (): void => callback();
  const { callbacks, listener } = entry;
  callbacks.add(own);
  return () => {
    if (!callbacks.delete(own) || callbacks.size > 0) return;
    if (waiting.get(signal)?.callbacks === callbacks) waiting.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}
