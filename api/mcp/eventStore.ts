import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { log } from '../../lib/logger';
import { redis } from '../../lib/redis';

// Resumable streams of the streamable HTTP transport (MCP: "Resumability and Redelivery").
// Every event sent on a session's SSE streams is appended to a Redis stream per (session, SSE
// stream), so that a client that lost its connection reconnects with Last-Event-ID (to this
// process or another) and receives what it missed. Event ids are `<streamId>.<redis entry id>`;
// the store belongs to one session, which also keeps the SDK's fixed id of the standalone GET
// stream from colliding between sessions.

/** Long enough for a reconnect after a network change; events are only a replay buffer. */
export const EVENT_TTL_S = 3600;
/** Per stream; a tool call sends a handful of events, a long generation about two a second. */
const MAX_EVENTS_PER_STREAM = 2000;
/** Id of the stream position before its first event: what the SDK's "priming" event stands for. */
const START = '0-0';

// One round trip per event: append and (re)arm the stream's expiry together.
const APPEND = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'm', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return id
`;

export class RedisEventStore implements EventStore {
  constructor(private readonly sessionId: string) {}

  private key(streamId: StreamId): string {
    return `mcp:events:${this.sessionId}:${streamId}`;
  }

  private parse(eventId: EventId): { streamId: string; entryId: string } | null {
    const dot = eventId.lastIndexOf('.');
    if (dot <= 0) return null;
    const streamId = eventId.slice(0, dot);
    const entryId = eventId.slice(dot + 1);
    return /^\d+-\d+$/.test(entryId) && streamId.length <= 200 ? { streamId, entryId } : null;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    // The SDK opens every stream with an empty "priming" event only to hand the client a first
    // cursor. Nothing needs storing for it: its id is the stream's start, and a resume from
    // there replays the whole stream. This halves the Redis writes of a short tool call.
    if (Object.keys(message).length === 0) return `${streamId}.${START}`;
    try {
      const entryId = (await redis().eval(
        APPEND,
        1,
        this.key(streamId),
        String(MAX_EVENTS_PER_STREAM),
        JSON.stringify(message),
        String(EVENT_TTL_S),
      )) as string;
      return `${streamId}.${entryId}`;
    } catch (err) {
      // Redis unreachable (docs/reliability.md "When Redis is down"): the message is still sent
      // on the open stream; only a later resume cannot replay it. Throwing here would leave the
      // stream open with nothing on it, a request that never ends.
      log.warn('mcp event not stored for resumption', { sessionId: this.sessionId, err: err instanceof Error ? err.message : String(err) });
      return `${streamId}.${START}`;
    }
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const parsed = this.parse(eventId);
    if (!parsed) return undefined;
    if (parsed.entryId === START) return parsed.streamId;
    return (await redis().exists(this.key(parsed.streamId))) ? parsed.streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const parsed = this.parse(lastEventId);
    if (!parsed) return '';
    const entries = (await redis().xrange(this.key(parsed.streamId), `(${parsed.entryId}`, '+')) as Array<[string, string[]]>;
    for (const [entryId, fields] of entries) {
      const message = JSON.parse(fields[1]!) as JSONRPCMessage;
      await send(`${parsed.streamId}.${entryId}`, message);
    }
    return parsed.streamId;
  }
}
