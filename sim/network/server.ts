// Local stand-in for the social network (ARCHITECTURE.md, "The outside world"): a real HTTP
// server speaking the LinkedIn-style protocol of docs/network-protocol.md, with a control API
// (`/__sim/*`, mirrored in-process as `NetworkSimulator.control`) for scripting what the network
// does: which tokens exist, who administers which organization, which calls fail and how.
//
// It exists so that the publish path can be proven against the failures that matter in
// production: revoked and expired tokens (spec 2.6 connection states, 3.4 revocation after
// repeated failures), transient outages, slow answers, and the worst one for exactly-once
// publishing: the network creates the post but the answer never arrives (spec 3.1, "publish
// exactly once"). Every post it receives is recorded so tests can count what was published.
//
// This file is the HTTP shell: it runs each call through routing, counting, latency, faults and
// the handler. The parts: state.ts (what the network knows), faults.ts (faults and latency),
// routes/ (one module per protocol area, and the control API), responses.ts (the wire answers).

import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { config } from '../../lib/config';
import type { SimulatorControl } from './control';
import { faultResponse, latencyFor, Sleepers, takeFault } from './faults';
import { MetricsGrowth, ViralCorpus } from './planning';
import { MAX_BODY_BYTES, readBody, restError, send } from './responses';
import { buildControl, handleControl, type ResettableContext } from './routes/control';
import { bearerToken } from './routes/common';
import { resolve } from './routes/index';
import { SimState } from './state';

export type { SimulatorControl, SimOperation, SimOperationFilter, SimPost, SimCounts, Fault, FaultInput, IssuedToken } from './control';
export { REFERENCE_HEADER } from './routes/common';

/** Image uploads (PUT to the upload URL) may be larger than API calls. */
const MAX_IMAGE_BYTES = 36 << 20;

export interface NetworkSimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the control API has no authentication. */
  host?: string;
  /** Client credentials the token endpoints accept; default config.network.clientId / clientSecret. */
  clientId?: string;
  clientSecret?: string;
}

export interface NetworkSimulator {
  url: string;
  port: number;
  control: SimulatorControl;
  close(): Promise<void>;
}

class Simulator {
  private readonly ctx: ResettableContext;
  private readonly sleepers = new Sleepers();
  closed = false;
  readonly control: SimulatorControl;

  constructor(opts: NetworkSimulatorOptions) {
    this.ctx = {
      state: new SimState(),
      clientId: opts.clientId ?? config.network.clientId,
      clientSecret: opts.clientSecret ?? config.network.clientSecret,
      growth: new MetricsGrowth(),
      viral: new ViralCorpus(),
    };
    this.control = buildControl(this.ctx, () => new SimState());
  }

  connectionOpened(): void {
    this.ctx.state.counts.connections++;
  }

  /** Ends every latency sleep at once, so close() is prompt. */
  wakeSleepers(): void {
    this.sleepers.wake();
  }

  /** Runs one protocol call through latency, faults and the handler. */
  async handleProtocol(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const resolved = resolve(req.method ?? 'GET', url.pathname);
    if ('status' in resolved) {
      const code = resolved.status === 405 ? 'METHOD_NOT_ALLOWED' : resolved.status === 400 ? 'ILLEGAL_ARGUMENT' : 'RESOURCE_NOT_FOUND';
      send(res, restError(resolved.status, code, `${req.method} ${url.pathname} is not part of the protocol`));
      return;
    }
    const { route, param } = resolved;
    const limit = route.operation === 'uploadImage' ? MAX_IMAGE_BYTES : MAX_BODY_BYTES;
    const body = await readBody(req, limit);
    if (body === null) {
      send(res, restError(413, 'REQUEST_ENTITY_TOO_LARGE', `body larger than ${limit} bytes`));
      return;
    }
    this.ctx.state.counts.calls[route.operation]++;
    const delay = latencyFor(this.ctx.state, route.operation);
    // The call goes on after the delay even if the client has given up: a real server does not
    // notice a client timeout, so a slow createPost still publishes. That is the ambiguity a
    // client timeout leaves, and findPostByReference is how a caller resolves it.
    if (delay > 0) await this.sleepers.sleep(delay);
    if (this.closed) {
      req.socket.destroy();
      return;
    }
    const fault = takeFault(this.ctx.state, route.operation, bearerToken(req));
    if (fault && fault.kind !== 'lost_response') {
      send(res, faultResponse(fault, route.style));
      return;
    }
    const response = route.handle(this.ctx, req, url, body, param);
    if (fault && fault.kind === 'lost_response') {
      this.ctx.state.counts.lostResponses++;
      if (fault.lostAs === '503') {
        send(res, faultResponse({ ...fault, kind: 'transient', status: 503 }, route.style));
      } else {
        res.socket?.destroy();
      }
      return;
    }
    send(res, response);
  }

  handleControl(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    return handleControl(this.control, req, res, url);
  }
}

export async function startNetworkSimulator(opts: NetworkSimulatorOptions = {}): Promise<NetworkSimulator> {
  const sim = new Simulator(opts);
  const host = opts.host ?? '127.0.0.1';

  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://simulator');
    } catch {
      send(res, restError(400, 'ILLEGAL_ARGUMENT', 'malformed request target'));
      return;
    }
    const work =
      url.pathname === '/__sim' || url.pathname.startsWith('/__sim/')
        ? sim.handleControl(req, res, url)
        : sim.handleProtocol(req, res, url);
    work.catch((err: unknown) => {
      // A simulator bug must show up as a 500 in the test that hit it, not crash the process.
      send(res, restError(500, 'INTERNAL_SERVER_ERROR', `simulator error: ${(err as Error)?.message ?? String(err)}`));
    });
  });
  // Idle connections stay open as a real API's do (close() ends them at once). Undici, behind
  // fetch, takes 2 s off a server's keep-alive hint: at 2 s it closed every connection after one
  // call, so each publish paid a TCP connect the network would not have cost.
  server.keepAliveTimeout = 65_000;
  server.on('connection', () => sim.connectionOpened());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    control: sim.control,
    close() {
      closing ??= new Promise<void>((resolve) => {
        sim.closed = true;
        sim.wakeSleepers();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
