import type * as workflows from '../../../workflows/index';

// Clients start a workflow by its type name (the samples' client.ts), so lib/ never loads
// workflow code. The name is checked against what the worker registers (workflows/index.ts):
// a renamed or removed workflow fails the type check here, not at run time.
export type WorkflowName = Extract<keyof typeof workflows, `${string}Workflow`>;
