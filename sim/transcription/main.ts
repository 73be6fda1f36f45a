// Runs the transcription simulator on its own (`npm run sim:transcription`): point
// TRANSCRIPTION_URL at the printed URL. Loopback only unless TRANSCRIPTION_SIM_HOST says otherwise.

import { startTranscriptionSim } from './server';

const raw = process.env.TRANSCRIPTION_SIMULATOR_PORT;
const port = raw === undefined || raw === '' ? 3902 : Number(raw);
if (!Number.isInteger(port) || port < 0 || port > 65535)
  throw new Error(`TRANSCRIPTION_SIMULATOR_PORT must be a port number, got "${raw}"`);

const sim = await startTranscriptionSim({ port, host: process.env.TRANSCRIPTION_SIM_HOST || '127.0.0.1' });
console.log(`transcription simulator listening on ${sim.url} (TRANSCRIPTION_URL=${sim.url})`);

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
