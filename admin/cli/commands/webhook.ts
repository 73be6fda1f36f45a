import { defineNoun, flag } from '../registry';

// Webhook endpoints for support (spec 4.8, docs/webhooks.md; docs/operator-cli.md): the API's own
// operations run as an admin of the endpoint's workspace (admin/support.ts), so an endpoint made
// here is checked (URL policy, event names, per-workspace limit) exactly as one made over REST.

const support = () => import('../../support');

const endpoint = { required: true, value: 'whe_x', help: 'webhook endpoint id' } as const;

export default defineNoun('webhook', 'Webhook endpoints, their deliveries and redelivery.', {
  create: {
    summary: 'Register a webhook endpoint; the answer shows its signing secret, once.',
    flags: {
      workspace: flag.workspace,
      url: { required: true, value: 'URL', help: 'receiver URL (https; docs/webhooks.md SSRF policy)' },
      event: { required: true, multiple: true, value: 'EVENT', help: 'subscribed event, e.g. post.published' },
      name: { value: 'NAME', help: 'display name' },
      project: { value: 'proj_x', help: "only this project's events (default: every project's)" },
    },
    examples: ['--workspace org_x --url https://hooks.example.com/cs --event post.scheduled,post.published --name "CRM sync"'],
    async run(args) {
      const { createWebhookEndpoint } = await support();
      return createWebhookEndpoint({
        workspaceId: args.need('workspace'),
        url: args.need('url'),
        events: args.list('event'),
        name: args.string('name'),
        projectId: args.string('project'),
      });
    },
  },
  list: {
    summary: "A workspace's webhook endpoints, newest first (never their secrets).",
    flags: {
      workspace: flag.workspace,
      limit: flag.count('at most N endpoints (default 50, at most 200)'),
    },
    check(args) {
      args.int('limit', 50, { min: 1, max: 200 });
    },
    async run(args) {
      const { listWebhookEndpoints } = await support();
      return listWebhookEndpoints({ workspaceId: args.need('workspace'), limit: args.int('limit', 50) });
    },
  },
  show: {
    summary: 'One endpoint with its most recent deliveries, each with its attempts (time, status code, latency, error).',
    flags: {
      endpoint,
      deliveries: flag.count('how many recent deliveries (default 20, at most 200)'),
    },
    check(args) {
      args.int('deliveries', 20, { min: 1, max: 200 });
    },
    async run(args) {
      const { showWebhookEndpoint } = await support();
      return showWebhookEndpoint({ endpointId: args.need('endpoint'), deliveries: args.int('deliveries', 20) });
    },
  },
  redeliver: {
    summary: 'Send one event to its endpoint again, through the delivery workflow (attempts numbered after the earlier ones).',
    synopsis: '--delivery whd_x | --endpoint whe_x --event evt_x',
    flags: {
      delivery: { value: 'whd_x', help: 'delivery id (webhook show)' },
      endpoint: { value: 'whe_x', help: 'with --event: the endpoint' },
      event: { value: 'evt_x', help: 'with --endpoint: the event id (the Webhook-Id header)' },
    },
    examples: ['--delivery whd_x', '--endpoint whe_x --event evt_x'],
    check(args) {
      const pair = args.has('endpoint') || args.has('event');
      if (args.has('delivery') === pair) throw args.usage('give --delivery, or --endpoint with --event');
      if (pair && !(args.has('endpoint') && args.has('event'))) throw args.usage('--endpoint and --event go together');
    },
    async run(args) {
      const { redeliverWebhook } = await support();
      return redeliverWebhook({
        deliveryId: args.has('delivery') ? args.need('delivery') : undefined,
        endpointId: args.has('endpoint') ? args.need('endpoint') : undefined,
        eventId: args.has('event') ? args.need('event') : undefined,
      });
    },
  },
  enable: {
    summary: 'Re-enable an endpoint: clears disabledReason and the failure streak (events missed meanwhile are not replayed).',
    flags: { endpoint },
    async run(args) {
      const { setWebhookEndpointActive } = await support();
      return setWebhookEndpointActive({ endpointId: args.need('endpoint'), active: true });
    },
  },
  disable: {
    summary: 'Disable an endpoint: its new events are recorded as failed (endpoint_inactive).',
    flags: { endpoint },
    async run(args) {
      const { setWebhookEndpointActive } = await support();
      return setWebhookEndpointActive({ endpointId: args.need('endpoint'), active: false });
    },
  },
});
