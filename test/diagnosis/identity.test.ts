/**
 * Queue ids: readable, URL-safe, unique per identity, and short enough for a URL path whatever the labels
 * hold (a 100 KB queue name must not make an id no route can serve).
 */
import { describe, expect, it } from 'vitest';
import { identityOf, queueId } from '../../src/diagnosis/identity.js';

describe('queue ids', () => {
  it('read as target, name and controller, with unsafe characters replaced', () => {
    expect(queueId('op/10.0.0.1:8080', 'pod', 'pod')).toMatch(/^op_10_0_0_1_8080\.pod~[0-9a-z]+$/);
    expect(queueId('op/a:1', 'q', 'c')).toMatch(/^op_a_1\.q\.c~/);
    expect(queueId('op/a:1', 'a.b', null)).not.toBe(queueId('op/a:1', 'a_b', null));
  });

  it('stay short and distinct for label values of any length', () => {
    const long = 'x'.repeat(100_000);
    const id = queueId('op/a:1', long, long);
    expect(id.length).toBeLessThan(400);
    expect(id).toMatch(/^[A-Za-z0-9_.~-]+$/);
    expect(queueId('op/a:1', `${long}y`, long)).not.toBe(id);
    expect(identityOf({ job: 'op', instance: 'a:1', name: long }).id.length).toBeLessThan(400);
  });
});
