/**
 * The engine's way of finding work queues in series, given to what counts queues below the engine (the scrape
 * source's page and held limits, store/held-limits.ts): the queue families of the metric vocabulary and the engine's
 * own key (`queueKey`, diagnosis/identity.ts), so a limit counts exactly the queues the engine would evaluate.
 */
import { queueKey } from '../diagnosis/identity.js';
import { QUEUE_FAMILIES } from '../metrics/names.js';
import type { QueueKeying } from '../store/held-limits.js';

export const ENGINE_QUEUE_KEYING: QueueKeying = { families: QUEUE_FAMILIES, key: queueKey };
