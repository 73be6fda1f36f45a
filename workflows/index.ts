// Every workflow the worker runs. Workflow code imports nothing from Node, the db or the API.
export { publishPostWorkflow, scheduleChangedSignal, publishStatusQuery } from './publishPost';
export { connectionHealthWorkflow, checkNowSignal } from './connectionHealth';
export { maintenanceWorkflow } from './maintenance';
export { deliverWebhookWorkflow, webhookRelayWorkflow } from './deliverWebhook';
export { generatePostWorkflow, jobProgressQuery } from './generatePost';
export { sweepUploadsWorkflow } from './sweepUploads';
export { generateImageWorkflow } from './generateImage';
