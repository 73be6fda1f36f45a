// Every workflow the worker runs. Workflow code imports nothing from Node, the db or the API.
export { publishPostWorkflow, scheduleChangedSignal, publishStatusQuery } from './publishPost';
export { connectionHealthWorkflow, checkNowSignal, healthStatusQuery } from './connectionHealth';
export { maintenanceWorkflow } from './maintenance';
export { deliverWebhookWorkflow } from './deliverWebhook';
export { webhookEndpointWorkflow } from './webhookEndpoint';
export { webhookRelayWorkflow } from './webhookRelay';
export { generatePostWorkflow, jobProgressQuery } from './generatePost';
export { metricsSyncWorkflow } from './metricsSync';
export { sweepUploadsWorkflow } from './sweepUploads';
export { generateImageWorkflow } from './generateImage';
export { reviewPostWorkflow, reviewDecidedSignal, reviewStatusQuery } from './reviewPost';
export { engagePostWorkflow, engagementStatusQuery } from './engagePost';
export { ingestSourceWorkflow } from './ingestSource';
export { ingestKnowledgeWorkflow } from './ingestKnowledge';
export { resyncKnowledgeWorkflow } from './resyncKnowledge';
