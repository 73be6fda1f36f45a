import { publishLag, publishOutcomes, webhookDeliveries } from '../lib/metrics';
import type { PublishOutcome } from './publishing';

// Worker metrics (lib/metrics.ts) around the activities whose outcomes operators alert on:
// publishing (outcome, and lag after the scheduled time) and webhook delivery attempts.
// Wrapping keeps the activities themselves free of instrumentation; an exception (our own
// infrastructure failing, retried by Temporal) counts as `error`.

export function instrumentPublish<I>(publish: (input: I) => Promise<PublishOutcome>) {
  return async (input: I): Promise<PublishOutcome> => {
    let result: PublishOutcome;
    try {
      result = await publish(input);
    } catch (err) {
      publishOutcomes.inc({ outcome: 'error' });
      throw err;
    }
    publishOutcomes.inc({ outcome: result.outcome === 'published' && result.already ? 'already_published' : result.outcome });
    if (result.outcome === 'published' && result.lagMs !== undefined) publishLag.observe(result.lagMs / 1000);
    return result;
  };
}

/** The webhook delivery pass (one per endpoint wake-up): its attempts counted by outcome. */
export function instrumentDeliveryPass<I, R extends { delivered: number; retrying: number; failed: number }>(
  pass: (input: I) => Promise<R>,
) {
  return async (input: I): Promise<R> => {
    let r: R;
    try {
      r = await pass(input);
    } catch (err) {
      webhookDeliveries.inc({ outcome: 'error' });
      throw err;
    }
    if (r.delivered) webhookDeliveries.inc({ outcome: 'delivered' }, r.delivered);
    if (r.retrying) webhookDeliveries.inc({ outcome: 'retry' }, r.retrying);
    if (r.failed) webhookDeliveries.inc({ outcome: 'failed' }, r.failed);
    return r;
  };
}
