import { createGeneration } from '../../operations/generations/generations';
import { cancelJob, getJob, listJobs } from '../../operations/jobs/jobs';
import { followJob } from '../progress';
import { operationTool, READ, WRITE } from '../tool';

// spec 4.9: list_jobs, get_job (jobs:read), cancel_job (jobs:cancel), generate_post
// (posts:generate). REST's jobs routes accept any token (spec 4.1); the tools need the scopes
// of the table.

export const listJobsTool = operationTool(listJobs, {
  name: 'list_jobs',
  title: 'List jobs',
  description:
    'Background jobs (AI post generation), newest first; filter by status (comma-separated QUEUED, RUNNING, DONE, FAILED, CANCELLED), type and projectId. Cursor-paginated. Requires jobs:read.',
  scopes: { allOf: ['jobs:read'] },
  annotations: { ...READ, idempotentHint: true },
});

export const getJobTool = operationTool(getJob, {
  name: 'get_job',
  title: 'Get a job',
  description:
    'One job with its progress snapshot (progress 0..1 and a message). On DONE, result.postId names the draft it wrote. Requires jobs:read.',
  scopes: { allOf: ['jobs:read'] },
  annotations: { ...READ, idempotentHint: true },
});

export const cancelJobTool = operationTool(cancelJob, {
  name: 'cancel_job',
  title: 'Cancel a job',
  description:
    'Cancels a QUEUED job; cancelling a cancelled job answers it again. A job already running or finished answers conflict. Requires jobs:cancel.',
  scopes: { allOf: ['jobs:cancel'] },
  annotations: { ...WRITE, idempotentHint: true },
  idempotent: true,
});

export const generatePostTool = operationTool(createGeneration, {
  name: 'generate_post',
  title: 'Generate a post with AI',
  description:
    'Queues an AI generation that writes one draft from source text ({type:"text", text}), a note ({type:"note", noteId}), an idea ({type:"idea", ideaId}: the brief is the source, contentType defaults from its pillar, and the draft is linked to the idea, which moves to in_production) or a source of the project whose status is Success ({type:"source", sourceId}: its text is the material, result.sourceId names it); it never schedules. Answers the job. When the request carries a progressToken, the call follows the job: notifications/progress (0 first, about every 750 ms, 1.0 at the end) and then the finished job, whose result.postId names the draft; otherwise poll get_job. Uses the AI budget and the daily spend cap. Requires posts:generate.',
  // spec 4.9 names posts:generate for the tool where REST's catalogue (4.1) needs posts:write.
  scopes: { allOf: ['posts:generate'] },
  scopesReplaceOperation: true,
  annotations: { ...WRITE, openWorldHint: true },
  defaultProject: true,
  idempotent: true,
  queuesJob: true,
  finish: async (ctx, body) => (ctx.progress ? followJob(ctx, body) : body),
});
