// Runs the video-transcript simulator on its own (npm start starts it when YOUTUBE_TRANSCRIPT_URL
// is unset; the test global setup does the same). Loopback only: it answers anyone.

import { startYoutubeSim } from './server';

const raw = process.env.YOUTUBE_SIMULATOR_PORT;
const port = raw === undefined || raw === '' ? 3904 : Number(raw);
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`YOUTUBE_SIMULATOR_PORT must be a port number, got "${raw}"`);

const sim = await startYoutubeSim({ port });
console.log(`YouTube transcript simulator listening on ${sim.url}`);

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
