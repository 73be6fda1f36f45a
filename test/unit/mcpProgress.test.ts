import assert from 'node:assert/strict';
import { heartbeatProgress, PROGRESS_INTERVAL_MS, FOLLOW_LIMIT_MS } from '../../api/mcp/progress';

// spec 4.9 Progress with MCP's rule that each notification's progress increases: the figure of
// each 750 ms update (api/mcp/progress.ts).

describe('heartbeatProgress', () => {
  it("takes the job's figure when it rose past the last update", () => {
    assert.equal(heartbeatProgress(0.1005, 0.9), 0.9);
    assert.equal(heartbeatProgress(0, 0.1), 0.1);
  });

  it('edges up by a thousandth of what is left before 1 while the figure stands still or lags behind', () => {
    assert.equal(heartbeatProgress(0.1, 0.1), 0.1 + 0.9 * 0.001);
    assert.ok(heartbeatProgress(0.5, 0.2) > 0.5);
  });

  it('increases on every tick of the longest follow and stays below 1, whatever the job reports', () => {
    let last = 0;
    for (let tick = 0; tick < FOLLOW_LIMIT_MS / PROGRESS_INTERVAL_MS; tick++) {
      const next = heartbeatProgress(last, tick < 5 ? 0.1 : 2);
      assert.ok(next > last, `tick ${tick}: ${next} after ${last}`);
      assert.ok(next < 1, `tick ${tick}: ${next}`);
      last = next;
    }
  });
});
