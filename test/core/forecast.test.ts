import { describe, expect, it } from 'vitest';
import { forecast, validateFleet } from '../../src/index.js';
import { specFleet } from './arbitraries.js';

function fleet() {
  const v = validateFleet(specFleet());
  if (!v.ok) throw new Error('the spec fleet validates');
  return v.fleet;
}

describe('forecast', () => {
  it('sends 3,000 at once, then 3,000 an hour (three numbers of 1,000/h)', () => {
    const f = forecast({ fleet: fleet(), businessId: 1, typeId: 10, messages: 6000 });
    expect(f.completed).toBe(true);
    expect(f.completionMs).toBe(3_600_000); // the 3,000th refilled message goes at 1 h exactly
  });

  it('gives up at the horizon, counting only what goes before it', () => {
    const f = forecast({ fleet: fleet(), businessId: 1, typeId: 10, messages: 4500, horizonMs: 600_000 });
    expect(f.completed).toBe(false);
    expect(f.stoppedBy).toBe('horizon');
    expect(f.completionMs).toBeNull();
    expect(f.sent).toBeLessThanOrEqual(3000 + 500); // the burst and 10 minutes of 3,000/h
  });
});
