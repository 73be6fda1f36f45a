// Runs the LLM simulator on its own, for local development: point LLM_BASE_URL at the printed
// URL. Loopback only unless LLM_STUB_HOST says otherwise, because it answers anyone.

import { closeOnSignals, simPort } from '../runner';
import { startLlmStub } from './server';

const stub = await startLlmStub({
  port: simPort('LLM_STUB_PORT', 3901),
  host: process.env.LLM_STUB_HOST || '127.0.0.1',
  apiKey: process.env.LLM_STUB_API_KEY || undefined,
});
console.log(`LLM stub ready on ${stub.url} (LLM_BASE_URL=${stub.url})`);
closeOnSignals(stub);
