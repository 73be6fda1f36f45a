import { createServer } from 'node:http';
import { serveUnderParent } from '../harness/serverChild';
import type { Receipt } from '../webhooks';
import { startReceiver, type Received } from './receiver';

// The webhooks bench's receivers (a child process): one server per endpoint (BENCH_RECEIVERS), each verifying with its endpoint's secret
// once told it, answering 204; asked over IPC (serverChild.ts) through a server of its own, never sent a request.

let secrets: string[] = [];
const receipts: Receipt[] = [];
const ports: number[] = [];
for (let i = 0; i < Number(process.env.BENCH_RECEIVERS); i++) {
  const record = (r: Received) => void receipts.push({ ...r, endpoint: i });
  ports.push((await startReceiver(() => secrets[i]!, record)).port);
}
serveUnderParent(createServer(), {
  calls: {
    ports: async () => ports,
    secrets: async (s) => void (secrets = s as string[]),
    count: async () => receipts.length,
    receipts: async () => receipts,
  },
});
