// Runs the video-transcript simulator on its own (npm start starts it when YOUTUBE_TRANSCRIPT_URL
// is unset; the test global setup does the same). Loopback only: it answers anyone.

import { closeOnSignals, simPort } from '../runner';
import { startYoutubeSim } from './server';

const sim = await startYoutubeSim({ port: simPort('YOUTUBE_SIMULATOR_PORT', 3904) });
console.log(`YouTube transcript simulator listening on ${sim.url}`);
closeOnSignals(sim);
