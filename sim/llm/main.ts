// Runs the LLM simulator on its own, for local development: point LLM_BASE_URL at the printed
// URL. Loopback only unless LLM_STUB_HOST says otherwise, because it answers anyone.

import { startLlmStub } from './server';

function portFromEnv(): number {
  const raw = process.env.LLM_STUB_PORT;
  if (raw === undefined || raw === '') return 3901;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`LLM_STUB_PORT must be a port number, got "${raw}"`);
  return port;
}

const stub = await startLlmStub({
  port: portFromEnv(),
  host: process.env.LLM_STUB_HOST || '127.0.0.1',
  apiKey: process.env.LLM_STUB_API_KEY || undefined,
});
console.log(`LLM stub ready on ${stub.url} (LLM_BASE_URL=${stub.url})`);

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    stub.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
