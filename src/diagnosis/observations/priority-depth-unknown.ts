import { compare } from '../conditions.js';
import { formatValue } from '../format.js';
import { defineObservation } from '../observation.js';

/**
 * Depth of unknown priority: a priority queue that has seen more than 25 distinct priorities writes every later
 * increment and decrement of its depth, at any priority, under `priority="exceeded_cardinality_limit"`, and its
 * other depth series keep their last values. The whole depth is still right (the increments and decrements all
 * land somewhere), so every diagnosis reads it; the per-priority view (real changes served before the initial
 * list and resyncs, a starved low-priority list) is lost, and the report says so rather than read frozen series.
 */
export const priorityDepthUnknown = defineObservation({
  id: 'PriorityDepthUnknown',
  title: 'Depth per priority lost',
  thresholds: {},
  // A fact of the page, not a condition that comes and goes: reported as soon as it is seen.
  forMs: 0,
  // Present once any depth series of the queue has a priority that is not a number.
  condition: () => compare('unknownPriorityDepthSeries', '>=', 1),
  evidence: ['unknownPriorityDepthSeries', 'depth', 'depthSlope'],
  text: {
    summary: ({ signals }) =>
      `Depth is exposed under a priority that is not a number (${formatValue(signals.unknownPriorityDepthSeries)} series, such as priority="exceeded_cardinality_limit"): the depth per priority is unknown, and the diagnoses read the whole depth (${formatValue(signals.depth)}).`,
    meaning:
      "controller-runtime's priority queue caps the priority label at 25 distinct values; past the cap every change of the depth, at any priority, is counted under exceeded_cardinality_limit and the other priority series keep their last values. The whole depth stays right, so backlogs and saturation are still found; what is lost is which priority waits: real changes backing up, or an initial list or resyncs starved by them. Controllers that reach the cap usually derive priorities from something that grows (a timestamp, a generation); keep to a few fixed priorities (handler.LowPriority and 0) to keep the view.",
  },
});
