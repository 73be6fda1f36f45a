import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createLogger, withLogContext, type LogFields } from '../../lib/logger';

// lib/logger.ts: JSON lines whose ids come from where the work runs (an API request, an activity),
// not from each call site.

function capture(level = 'debug') {
  const lines: LogFields[] = [];
  const logger = createLogger({ level, destination: { write: (s: string) => void lines.push(JSON.parse(s) as LogFields) } });
  return { logger, lines };
}

describe('lib/logger', () => {
  it('writes one JSON object per line with time, level, message and fields', () => {
    const { logger, lines } = capture();
    logger.info('api listening', { port: 3000 });
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line!.level, 'info');
    assert.equal(line!.msg, 'api listening');
    assert.equal(line!.port, 3000);
    assert.ok(!Number.isNaN(Date.parse(line!.t as string)));
  });

  it('drops lines under the configured level, and reads an unknown level as info', () => {
    const quiet = capture('error');
    quiet.logger.info('ignored');
    quiet.logger.warn('ignored');
    quiet.logger.error('kept');
    assert.deepEqual(
      quiet.lines.map((l) => l.msg),
      ['kept'],
    );
    const unknown = capture('chatty');
    unknown.logger.debug('ignored');
    unknown.logger.info('kept');
    assert.deepEqual(
      unknown.lines.map((l) => l.msg),
      ['kept'],
    );
  });

  it('serializes an error with its type, message and stack', () => {
    const { logger, lines } = capture();
    logger.error('unhandled error', { err: new TypeError('boom') });
    const err = lines[0]!.err as { type: string; message: string; stack: string };
    assert.equal(err.type, 'TypeError');
    assert.equal(err.message, 'boom');
    assert.match(err.stack, /TypeError: boom/);
  });

  it('carries the request id on every line logged inside a request, across awaits', async () => {
    const { logger, lines } = capture();
    await withLogContext({ requestId: 'request_1' }, async () => {
      logger.info('before');
      await new Promise((r) => setTimeout(r, 1));
      logger.warn('after');
    });
    logger.info('outside');
    assert.deepEqual(
      lines.map((l) => [l.msg, l.requestId]),
      [
        ['before', 'request_1'],
        ['after', 'request_1'],
        ['outside', undefined],
      ],
    );
  });

  it('child loggers carry their bindings', () => {
    const { logger, lines } = capture();
    logger.child({ postId: 'post_1' }).child({ attempt: 2 }).info('publishing');
    assert.equal(lines[0]!.postId, 'post_1');
    assert.equal(lines[0]!.attempt, 2);
  });

  it('carries the workflow id inside an activity, and the job id inside a generation activity', async () => {
    const { logger, lines } = capture();
    const publish = new MockActivityEnvironment({
      workflowType: 'publishPostWorkflow',
      activityType: 'publishPost',
      workflowExecution: { workflowId: 'publish-post_1', runId: 'r1' },
    });
    await publish.run(async () => logger.info('published'));
    const generate = new MockActivityEnvironment({
      workflowType: 'generatePostWorkflow',
      activityType: 'generateDraft',
      workflowExecution: { workflowId: 'job_1', runId: 'r2' },
    });
    await generate.run(async () => logger.info('drafted'));
    assert.deepEqual(
      lines.map((l) => [l.msg, l.workflowId, l.activityType, l.jobId]),
      [
        ['published', 'publish-post_1', 'publishPost', undefined],
        ['drafted', 'job_1', 'generateDraft', 'job_1'],
      ],
    );
  });
});
