/**
 * How far the service lets V8's heap grow past what it holds before collecting it.
 *
 * V8 sets the size at which it next collects the old generation to what survived the last full collection times a
 * factor of up to 4, chosen from how fast the program allocates; a service that evaluates in bursts is read as
 * allocating fast, so its heap reaches four times what it holds before a full collection runs, and the resident
 * memory follows (1,000 queues: 106 MiB live, a peak RSS over 600 MiB; a memory limit sized for what the service
 * holds would kill it first). Node sizes the heap limit from the host's memory or the container's, never from what
 * the service needs, so a limit alone leaves the same swing under a higher ceiling.
 *
 * Contract: `limitHeapGrowth` sets V8's `--heap-growing-percent` (the factor becomes 1 + percent / 100) for the
 * rest of the process, unless the process was started with that flag (`node --heap-growing-percent=N …`, which
 * then wins). V8 reads the flag at every full collection, so setting it after start takes effect (NODE_OPTIONS
 * does not accept it). Called once, before the service holds anything.
 */
import v8 from 'node:v8';

/** The heap may grow by this share (in percent) of what survived the last full collection before the next one. */
export const HEAP_GROWING_PERCENT = 30;

const FLAG = '--heap-growing-percent';

/** Limits the heap's growth between full collections (see the module comment); false when the command line set it. */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => arg === FLAG || arg.startsWith(`${FLAG}=`) || arg.startsWith('--heap_growing_percent')))
    return false;
  v8.setFlagsFromString(`${FLAG}=${HEAP_GROWING_PERCENT}`);
  return true;
}
