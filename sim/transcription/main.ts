// Runs the transcription simulator on its own (`npm run sim:transcription`): point
// TRANSCRIPTION_URL at the printed URL. Loopback only unless TRANSCRIPTION_SIM_HOST says otherwise.

import { closeOnSignals, simPort } from '../runner';
import { startTranscriptionSim } from './server';

const sim = await startTranscriptionSim({
  port: simPort('TRANSCRIPTION_SIMULATOR_PORT', 3902),
  host: process.env.TRANSCRIPTION_SIM_HOST || '127.0.0.1',
});
console.log(`transcription simulator listening on ${sim.url} (TRANSCRIPTION_URL=${sim.url})`);
closeOnSignals(sim);
