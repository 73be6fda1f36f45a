// One typed view of the environment, read once. Every limit and timing of spec section 8
// is a value here whose default is the spec's number (ARCHITECTURE.md, Configuration).
// docs/configuration.md lists every variable below.
import { DEFAULT_WORKER_HEAP_MIB, workerHeapArg } from './workerHeap';

function str(name: string, fallback: string): string {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
}
function optional(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}
function int(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got "${v}"`);
  return n;
}
function bool(name: string, fallback: boolean): boolean {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  return v === '1' || v.toLowerCase() === 'true' || v.toLowerCase() === 'yes';
}
function choice<T extends string>(name: string, values: readonly T[], fallback: T): T {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  if (!(values as readonly string[]).includes(v)) throw new Error(`${name} must be one of ${values.join(', ')}, got "${v}"`);
  return v as T;
}
/**
 * A comma-separated list of origins (`scheme://host:port`), each spelled as the URL standard
 * writes it (`new URL(o).origin`): a path, credentials or a non-canonical spelling is a
 * configuration error rather than an allowance wider or narrower than intended.
 */
function origins(name: string): string[] {
  return parseOrigins(name, process.env[name]);
}
export function parseOrigins(name: string, v: string | undefined): string[] {
  if (v === undefined || v.trim() === '') return [];
  return v.split(',').map((raw) => {
    const o = raw.trim();
    let origin: string;
    try {
      origin = new URL(o).origin;
    } catch {
      throw new Error(`${name}: "${o}" is not an origin such as http://127.0.0.1:8080`);
    }
    if (origin === 'null' || origin !== o.replace(/\/$/, '').toLowerCase())
      throw new Error(`${name}: "${o}" must be an origin spelled as ${origin === 'null' ? 'scheme://host:port' : origin}`);
    return origin;
  });
}

export interface PlanLimits {
  apiAccess: boolean;
  /** Daily API AI-spend cap in cents; null = unlimited (spec 2.16 apiSpend). */
  dailySpendCapCents: number | null;
  /** Weekly AI budget per project and for the workspace pool, in cents; null = unlimited. */
  weeklyAiBudgetCents: number | null;
  storageLimitBytes: number | null;
  assetLimit: number | null;
  features: Record<string, boolean>;
}

function loadConfig() {
  const port = int('PORT', 3000);
  const mcpPort = int('MCP_PORT', 3001);
  const publicUrl = str('PUBLIC_URL', `http://localhost:${port}`);
  return {
    env: str('NODE_ENV', 'development'),
    port,
    mcpPort,
    /** Public origin of the REST API and the authorization server ({base_url} = {auth_url}). */
    publicUrl,
    /** Public origin of the MCP transport ({mcp_url}). */
    mcpPublicUrl: str('MCP_PUBLIC_URL', `http://localhost:${mcpPort}`),
    dashboardUrl: str('DASHBOARD_URL', 'https://app.example.com'),
    /** spec 7.1 docs_url: the service's own errors page (api/openapi/docs.ts), one anchor per code. */
    docsUrl: str('DOCS_URL', `${publicUrl}/docs/errors`),
    databaseUrl: str('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/content_scheduler'),
    /** Postgres connections per process; a worker's publish transactions each hold one across a network call. */
    dbPoolMax: int('DB_POOL_MAX', 20),
    redisUrl: str('REDIS_URL', 'redis://127.0.0.1:6379'),
    /** Unset: `npm start` runs an embedded Temporal dev server. */
    temporalAddress: optional('TEMPORAL_ADDRESS'),
    temporalNamespace: str('TEMPORAL_NAMESPACE', 'default'),
    temporalTaskQueue: str('TEMPORAL_TASK_QUEUE', 'content-scheduler'),
    temporalCliPath: optional('TEMPORAL_CLI_PATH'),
    temporalUiPort: int('TEMPORAL_UI_PORT', 8233),
    /** gRPC port of the embedded dev server that `npm start` runs when TEMPORAL_ADDRESS is unset. */
    temporalPort: int('TEMPORAL_PORT', 7233),
    worker: {
      activityConcurrency: int('WORKER_ACTIVITY_CONCURRENCY', 100),
      /**
       * Workflow tasks, activities and local activities of the jobs queue one worker runs at
       * once (lib/temporal/contracts/queues.ts): what the model backend serves at once.
       */
      jobConcurrency: int('WORKER_JOB_CONCURRENCY', 8),
      workflowConcurrency: int('WORKER_WORKFLOW_CONCURRENCY', 100),
      /** How often the reconciler catches up schedule changes whose signal was lost. */
      reconcileIntervalSeconds: int('RECONCILE_INTERVAL_SECONDS', 30),
      /** Linked projects whose health workflow one reconciler pass re-ensures in its rolling sweep. */
      healthSweepPage: int('RECONCILE_HEALTH_SWEEP_PAGE', 200),
      /**
       * V8 heap limit of the worker process in MiB (`--max-old-space-size`), applied by `npm start`
       * and `npm run start:worker` (docs/publishing.md "Capacity"); 0 = Node's own limit, about a
       * sixth of the machine's memory up to 4 GiB, which a worker grows towards in a burst.
       */
      heapMiB: int('WORKER_HEAP_MIB', DEFAULT_WORKER_HEAP_MIB),
      /** Workflows kept in the worker's sticky cache (bounds its memory; evicted ones replay from history). */
      maxCachedWorkflows: int('WORKER_MAX_CACHED_WORKFLOWS', 300),
      /** Concurrent long polls on the workflow and on the activity task queue. */
      workflowTaskPollers: int('WORKER_WORKFLOW_POLLERS', 10),
      activityTaskPollers: int('WORKER_ACTIVITY_POLLERS', 10),
      /** Local activities (the publish step) one worker runs at once. */
      localActivityConcurrency: int('WORKER_LOCAL_ACTIVITY_CONCURRENCY', 100),
      /** A pre-built workflow bundle (`npm run build`) to load instead of bundling the source at start. */
      workflowBundlePath: optional('WORKFLOW_BUNDLE_PATH'),
    },
    /** Behind a load balancer: take the client address from X-Forwarded-For. */
    trustProxy: bool('TRUST_PROXY', false),
    /** Log every request (not only 5xx). */
    logRequests: bool('LOG_REQUESTS', false),
    /** Prometheus /metrics of the API and of the worker, each on its own port, never the public one; 0 = any free port. */
    metricsPort: int('METRICS_PORT', 9464),
    workerMetricsPort: int('WORKER_METRICS_PORT', 9465),
    /** The Temporal SDK's own worker metrics (Prometheus, served by the SDK core); unset = off. */
    temporalSdkMetricsPort: optional('TEMPORAL_SDK_METRICS_PORT') === undefined ? undefined : int('TEMPORAL_SDK_METRICS_PORT', 0),
    dataDir: str('DATA_DIR', '.data'),
    logLevel: str('LOG_LEVEL', 'info'),

    /** Keyed hash of API keys (spec 5.1) and signing of pagination cursors. */
    secretKey: str('SECRET_KEY', 'dev-only-secret-change-me-0123456789abcdef'),
    /** AES-256-GCM key (any string; derived with SHA-256) for network tokens at rest. */
    encryptionKey: str('ENCRYPTION_KEY', 'dev-only-encryption-key-change-me'),

    apiVersions: { current: '2026-08-10', supported: ['2026-08-10', '2026-08-01'] as const },

    rateLimit: {
      windowMs: int('RATE_LIMIT_WINDOW_MS', 60_000),
      readPerWindow: int('RATE_LIMIT_READ', 120),
      writePerWindow: int('RATE_LIMIT_WRITE', 60),
      unauthenticatedPerWindow: int('RATE_LIMIT_UNAUTHENTICATED', 120),
    },
    idempotencyWindowMs: int('IDEMPOTENCY_WINDOW_MS', 24 * 3600_000),
    /** Local cache of API-key records; revocation must reach every process within 5 s (spec 5.1). */
    authCacheMs: int('AUTH_CACHE_MS', 4_000),
    membershipCacheMs: int('MEMBERSHIP_CACHE_MS', 60_000),

    limits: {
      contentChars: 100_000,
      titleChars: 500,
      sourceTextChars: 100_000,
      languageChars: 16,
      waitForCompletionMaxMs: int('WAIT_FOR_COMPLETION_MAX_MS', 25_000),
      postListDefault: 50,
      postListMax: 200,
      webhookListDefault: 50,
      webhookListMax: 200,
      contextProjects: 25,
      teamMembers: 100,
      teamProjectRefs: 25,
    },

    oauth: {
      accessTokenTtlS: int('OAUTH_ACCESS_TOKEN_TTL_S', 3600),
      codeTtlS: int('OAUTH_CODE_TTL_S', 600),
      refreshGraceS: int('OAUTH_REFRESH_GRACE_S', 15),
      refreshTokenTtlS: int('OAUTH_REFRESH_TOKEN_TTL_S', 90 * 24 * 3600),
    },

    network: {
      /** Unset: `npm start` and the tests run the local network simulator. */
      apiUrl: optional('NETWORK_API_URL'),
      apiVersion: str('NETWORK_API_VERSION', '202610'),
      clientId: str('NETWORK_CLIENT_ID', 'content-scheduler'),
      clientSecret: str('NETWORK_CLIENT_SECRET', 'dev-network-secret'),
      timeoutMs: int('NETWORK_TIMEOUT_MS', 15_000),
      simulatorPort: int('NETWORK_SIMULATOR_PORT', 3900),
      /** Address the simulator listens on (0.0.0.0 inside docker-compose). */
      simulatorHost: str('NETWORK_SIMULATOR_HOST', '127.0.0.1'),
      expiringSoonDays: int('CONNECTION_EXPIRING_SOON_DAYS', 14),
      revokeAfterFailures: int('CONNECTION_REVOKE_AFTER_FAILURES', 3),
      healthCheckIntervalS: int('CONNECTION_HEALTH_INTERVAL_S', 6 * 3600),
    },
    publish: {
      delaySeconds: int('PUBLISH_DELAY_SECONDS', 120),
      /** How long transient publish failures keep retrying after the due time. */
      retryWindowSeconds: int('PUBLISH_RETRY_WINDOW_SECONDS', 6 * 3600),
      /** First backoff after a transient publish failure; doubles up to 5 minutes. */
      retryBaseSeconds: int('PUBLISH_RETRY_BASE_SECONDS', 5),
      /** A workspace's posts due at one instant go out in turns 1 ms apart, up to this much after it (lib/publishing/turns.ts); 0: all at once. */
      turnSpreadMs: int('PUBLISH_TURN_SPREAD_MS', 1_000),
      /** A post moved later or off the schedule is not signalled while its workflow's fire time is at least this far (lib/publishing/schedule.ts wakesWorkflow). */
      leaveAsleepLeadMs: int('PUBLISH_LEAVE_ASLEEP_LEAD_MS', 60_000),
    },

    /** Engagement after publish (docs/engagement.md): each account's like/comment waits a jittered delay in this range. */
    engagement: {
      minDelaySeconds: int('ENGAGEMENT_MIN_DELAY_SECONDS', 60),
      maxDelaySeconds: int('ENGAGEMENT_MAX_DELAY_SECONDS', 900),
    },

    llm: {
      /**
       * `api`: the OpenAI-compatible client at LLM_BASE_URL, else at the local LLM simulator
       * (`npm start` and the tests run it). `builtin`: the in-process deterministic writer, no HTTP.
       */
      writer: choice('LLM_WRITER', ['api', 'builtin'] as const, 'api'),
      baseUrl: optional('LLM_BASE_URL'),
      /** Port of the LLM simulator (sim/llm) `npm start` runs when LLM_BASE_URL is unset. */
      simulatorPort: int('LLM_STUB_PORT', 3901),
      apiKey: optional('LLM_API_KEY'),
      model: str('LLM_MODEL', 'gpt-4o-mini'),
      timeoutMs: int('LLM_TIMEOUT_MS', 60_000),
      /** Cents a post generation reserves against the AI meters (spec 4.4, 8: about 5 cents). */
      reserveCents: int('AI_RESERVE_CENTS', 5),
      /** Price of the configured model, in hundredths of a cent per 1,000 tokens. */
      priceInputPer1kTokens: int('LLM_PRICE_INPUT_PER_1K', 15),
      priceOutputPer1kTokens: int('LLM_PRICE_OUTPUT_PER_1K', 60),
      /** Cost charged for one built-in (offline) generation, in cents. */
      builtinCostCents: int('AI_BUILTIN_COST_CENTS', 1),
    },

    generation: {
      /** estimatedCompletionMs of a new job until 5 generations have finished (then their median). */
      estimatedCompletionMs: int('GENERATION_ESTIMATE_MS', 15_000),
      /** How long GET /v1/jobs/{id} waits for a running workflow's progress answer before using the row. */
      progressQueryTimeoutMs: int('GENERATION_PROGRESS_QUERY_TIMEOUT_MS', 1_000),
      jobListDefault: 50,
      jobListMax: 200,
    },

    /** Post analytics (docs/analytics.md). */
    analytics: {
      /** How long the metrics-sync workflow sleeps when no post is due. */
      syncIntervalSeconds: int('METRICS_SYNC_INTERVAL_SECONDS', 60),
      /** Posts claimed per sync activity run. */
      syncBatch: int('METRICS_SYNC_BATCH', 500),
      /** Metrics calls in flight at once within one run. */
      syncConcurrency: int('METRICS_SYNC_CONCURRENCY', 8),
      /** Divides every cadence interval (1 in production; tests compress hours into seconds). */
      cadenceDivisor: int('METRICS_CADENCE_DIVISOR', 1),
      /** Best-times-to-post needs at least this many published posts with metrics. */
      bestTimesMinPosts: int('ANALYTICS_BEST_TIMES_MIN_POSTS', 10),
    },

    webhooks: {
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000),
      disableAfterFailures: int('WEBHOOK_DISABLE_AFTER_FAILURES', 5),
      /** Tests and local development only: permit loopback receivers. */
      allowLoopback: bool('WEBHOOK_ALLOW_LOOPBACK', false),
      /** Plain-http receiver URLs; defaults to the loopback allowance (development and tests). */
      allowHttp: bool('WEBHOOK_ALLOW_HTTP', bool('WEBHOOK_ALLOW_LOOPBACK', false)),
      /** First retry wait; later waits are multiples of it (docs/webhooks.md, Retry schedule). */
      retryBaseMs: int('WEBHOOK_RETRY_BASE_MS', 10_000),
      maxAttempts: int('WEBHOOK_MAX_ATTEMPTS', 8),
      /** Outbox relay poll when no NOTIFY arrives. */
      relayPollMs: int('WEBHOOK_RELAY_POLL_MS', 250),
      /** Days a relayed event whose deliveries are all closed is kept (docs/webhooks.md "Retention"); 0 keeps every event. */
      outboxRetentionDays: int('OUTBOX_RETENTION_DAYS', 30),
      /** Attempts in flight at once to one endpoint (docs/webhooks.md, How it runs). */
      endpointConcurrency: int('WEBHOOK_ENDPOINT_CONCURRENCY', 16),
      maxEndpointsPerWorkspace: int('WEBHOOK_MAX_ENDPOINTS', 50),
    },

    /** Object storage (spec 4.5, 4.7): S3 through the AWS SDK. Unset S3_ENDPOINT: `npm start` and the tests run an embedded server. */
    s3: {
      endpoint: optional('S3_ENDPOINT'),
      /** Origin put into presigned URLs when clients reach the store by another address than the service (docker-compose). */
      publicEndpoint: optional('S3_PUBLIC_ENDPOINT'),
      bucket: str('S3_BUCKET', 'content-scheduler'),
      region: str('S3_REGION', 'us-east-1'),
      accessKeyId: str('S3_ACCESS_KEY_ID', 'dev-s3-access-key'),
      secretAccessKey: str('S3_SECRET_ACCESS_KEY', 'dev-s3-secret-key-change-me'),
      /** Path-style URLs (http://host/bucket/key): what self-hosted S3 servers expect. */
      forcePathStyle: bool('S3_FORCE_PATH_STYLE', true),
      /** Connections to the store per process (the SDK's own default is 50). */
      maxSockets: int('S3_MAX_SOCKETS', 200),
      /** The embedded server's binary (else `versitygw` on PATH, else the cache, else built with Go). */
      serverPath: optional('S3_SERVER_PATH'),
      /** Port of the embedded server that `npm start` runs when S3_ENDPOINT is unset. */
      serverPort: int('S3_SERVER_PORT', 7070),
    },
    uploads: {
      /** Life of a presigned PUT URL. */
      urlTtlSeconds: int('UPLOAD_URL_TTL_S', 900),
      /** Life of an upl_ handle: after it, the handle answers 422 and the sweep removes its object. */
      handleTtlSeconds: int('UPLOAD_HANDLE_TTL_S', 24 * 3600),
      /** How often the expiry sweep runs (a Temporal Schedule). */
      sweepIntervalSeconds: int('UPLOAD_SWEEP_INTERVAL_S', 3600),
      /** Per-content-type caps on the declared size (spec 8 leaves them open; docs/media.md). */
      maxBytes: {
        image: int('UPLOAD_MAX_IMAGE_BYTES', 10 * 1024 ** 2),
        document: int('UPLOAD_MAX_DOCUMENT_BYTES', 50 * 1024 ** 2),
        text: int('UPLOAD_MAX_TEXT_BYTES', 10 * 1024 ** 2),
        audio: int('UPLOAD_MAX_AUDIO_BYTES', 200 * 1024 ** 2),
        video: int('UPLOAD_MAX_VIDEO_BYTES', 1024 ** 3),
      },
    },
    media: {
      /** spec 8: inline image about 3 MB decoded. */
      inlineMaxBytes: int('MEDIA_INLINE_MAX_BYTES', 3 * 1024 ** 2),
      /** spec 8: inline file on the agent transport, 25 MB decoded. */
      mcpInlineMaxBytes: int('MCP_INLINE_MAX_BYTES', 25 * 1024 ** 2),
      altChars: 1_000,
      titleChars: 120,
      fileNameChars: 200,
      mimeTypeChars: 200,
      listDefault: 50,
      listMax: 200,
      /** The network's per-post image limit (a multi-image post carries up to 20). */
      maxImagesPerPost: int('NETWORK_MAX_IMAGES_PER_POST', 20),
    },
    /**
     * Audio and video transcription for file sources (docs/sources.md): an OpenAI-compatible
     * `POST /v1/audio/transcriptions`. `npm start` runs the local simulator when the URL is unset.
     */
    transcription: {
      /** Base URL including the version path, e.g. https://api.openai.com/v1. */
      url: optional('TRANSCRIPTION_URL'),
      apiKey: optional('TRANSCRIPTION_API_KEY'),
      model: str('TRANSCRIPTION_MODEL', 'whisper-1'),
      timeoutMs: int('TRANSCRIPTION_TIMEOUT_MS', 300_000),
      /** Price of the configured model, in hundredths of a cent per minute of audio (whisper-1: $0.006). */
      pricePerMinute: int('TRANSCRIPTION_PRICE_PER_MINUTE', 60),
      /** Port of the simulator `npm start` runs when TRANSCRIPTION_URL is unset. */
      simulatorPort: int('TRANSCRIPTION_SIMULATOR_PORT', 3902),
    },
    /** Sources (spec 2.11, 4.5; docs/sources.md). */
    sources: {
      /** Characters of the text shown as `preview` (the full text is never returned). */
      previewChars: int('SOURCE_PREVIEW_CHARS', 2_000),
      /** spec 8: `source.text` is at most 100,000 characters; the same bound holds for text sources. */
      textMaxChars: 100_000,
      nameChars: 200,
      /** Extracted text kept per source; longer documents are cut here. */
      storedTextMaxChars: int('SOURCE_STORED_TEXT_MAX_CHARS', 1_000_000),
      estimatedCompletionMs: int('SOURCE_INGEST_ESTIMATE_MS', 10_000),
      /** Cents a file source's ingest (transcription, topics and hooks) reserves against the AI meters. */
      reserveCents: int('SOURCE_INGEST_RESERVE_CENTS', 5),
      /** Topics and hooks kept per source. */
      maxTopics: 8,
      maxHooks: 5,
    },
    /** Knowledge base (docs/knowledge.md): ingest, URL fetches, search and grounding. */
    knowledge: {
      /** URL ingest may reach loopback addresses (tests, local development); defaults to the webhook setting. */
      allowLoopback: bool('KNOWLEDGE_ALLOW_LOOPBACK', bool('WEBHOOK_ALLOW_LOOPBACK', false)),
      /**
       * Origins URL ingest may reach on loopback although loopback is not allowed (a local test
       * server, a sidecar): exact scheme, host and port; a redirect elsewhere on loopback is refused.
       */
      fetchAllowOrigins: origins('KNOWLEDGE_FETCH_ALLOW_ORIGINS'),
      /** Plain-http URLs for URL ingest; defaults to the loopback allowance. */
      allowHttp: bool('KNOWLEDGE_ALLOW_HTTP', true),
      /** Whole URL fetch (DNS, redirects, body) must finish within this. */
      fetchTimeoutMs: int('KNOWLEDGE_FETCH_TIMEOUT_MS', 15_000),
      /** Largest page body read for URL ingest. */
      fetchMaxBytes: int('KNOWLEDGE_FETCH_MAX_BYTES', 5 * 1024 ** 2),
      /** Redirects followed (each re-checked against the address policy). */
      maxRedirects: int('KNOWLEDGE_FETCH_MAX_REDIRECTS', 5),
      /** Transcript service for YouTube ingest; the local simulator when unset (npm start, tests). */
      youtubeTranscriptUrl: optional('YOUTUBE_TRANSCRIPT_URL'),
      youtubeSimulatorPort: int('YOUTUBE_SIMULATOR_PORT', 3904),
      youtubeTimeoutMs: int('YOUTUBE_TIMEOUT_MS', 15_000),
      /** Characters per indexed chunk (cut at paragraph or sentence ends). */
      chunkChars: int('KNOWLEDGE_CHUNK_CHARS', 1_200),
      /** Longest text a document keeps (text bodies, extracted files, pages, transcripts). */
      maxTextChars: int('KNOWLEDGE_MAX_TEXT_CHARS', 2_000_000),
      /** How often URL documents are re-fetched (a Temporal Schedule). */
      resyncIntervalSeconds: int('KNOWLEDGE_RESYNC_INTERVAL_S', 6 * 3600),
      /** Tokens of knowledge handed to the writer per generation (about 4 characters a token). */
      groundingTokenBudget: int('KNOWLEDGE_GROUNDING_TOKENS', 600),
      estimatedCompletionMs: int('KNOWLEDGE_INGEST_ESTIMATE_MS', 5_000),
      /** Cents a file document's ingest (audio and video are transcribed) reserves against the AI meters. */
      reserveCents: int('KNOWLEDGE_INGEST_RESERVE_CENTS', 5),
      listDefault: 20,
      listMax: 100,
    },

    /**
     * Image generation jobs (docs/media.md). `api`: the OpenAI-compatible images API at
     * IMAGES_BASE_URL, else at the LLM's address (the LLM simulator when that is unset too, as
     * `npm start` and the tests run it). `builtin`: the in-process quote-card renderer, no HTTP.
     */
    images: {
      generator: choice('IMAGES_GENERATOR', ['api', 'builtin'] as const, 'api'),
      baseUrl: optional('IMAGES_BASE_URL'),
      apiKey: optional('IMAGES_API_KEY') ?? optional('LLM_API_KEY'),
      model: str('IMAGES_MODEL', 'gpt-image-1'),
      size: str('IMAGES_SIZE', '1024x1024'),
      timeoutMs: int('IMAGES_TIMEOUT_MS', 120_000),
      /** Cost of one image from the API, in cents (charged to the AI budget and the daily cap). */
      costCents: int('IMAGES_COST_CENTS', 4),
      /** Cost charged for one built-in card, in cents. */
      builtinCostCents: int('IMAGES_BUILTIN_COST_CENTS', 0),
      /** Cents an image generation reserves against the AI meters until its cost is known. */
      reserveCents: int('IMAGES_RESERVE_CENTS', 5),
      estimatedCompletionMs: int('IMAGE_GENERATION_ESTIMATE_MS', 5_000),
    },

    plans: {
      FREE: {
        apiAccess: false,
        dailySpendCapCents: 0,
        weeklyAiBudgetCents: 100,
        storageLimitBytes: 500 * 1024 ** 2,
        assetLimit: 50,
        features: { api: false, mcp: false, webhooks: false, aiGeneration: true },
      },
      STARTER: {
        apiAccess: false,
        dailySpendCapCents: 0,
        weeklyAiBudgetCents: 500,
        storageLimitBytes: 2 * 1024 ** 3,
        assetLimit: 500,
        features: { api: false, mcp: false, webhooks: false, aiGeneration: true },
      },
      ADVANCED: {
        apiAccess: true,
        dailySpendCapCents: int('SPEND_CAP_ADVANCED_CENTS', 500),
        weeklyAiBudgetCents: 2_000,
        storageLimitBytes: 10 * 1024 ** 3,
        assetLimit: 5_000,
        features: { api: true, mcp: true, webhooks: true, aiGeneration: true },
      },
      BUSINESS: {
        apiAccess: true,
        dailySpendCapCents: int('SPEND_CAP_BUSINESS_CENTS', 2_000),
        weeklyAiBudgetCents: 10_000,
        storageLimitBytes: 100 * 1024 ** 3,
        assetLimit: 50_000,
        features: { api: true, mcp: true, webhooks: true, aiGeneration: true, reviewWorkflow: true },
      },
      ENTERPRISE: {
        apiAccess: true,
        dailySpendCapCents: null,
        weeklyAiBudgetCents: null,
        storageLimitBytes: null,
        assetLimit: null,
        features: { api: true, mcp: true, webhooks: true, aiGeneration: true, reviewWorkflow: true, sso: true },
      },
    } satisfies Record<string, PlanLimits>,
    /**
     * Testing only (test/api/crashPoints.e2e.test.ts): `<operation>:<point>` makes an API process
     * SIGKILL itself when an idempotent write of that operation reaches that point (lib/crashPoints.ts).
     */
    crashAt: optional('CRASH_AT'),
    /**
     * The lingering close after a request body over its limit (api/rawBody.ts, RFC 9112 9.6): how
     * much more of the body is read and thrown away, and for how long, before the connection is
     * cut. Enough for a client that sends a few MB over a cap to read its 413; an endless body is
     * cut off at either bound.
     */
    bodyDiscard: {
      maxBytes: int('BODY_DISCARD_MAX_BYTES', 16 * 1024 ** 2),
      maxMs: int('BODY_DISCARD_MAX_MS', 5_000),
    },

    /**
     * OAuth Client ID Metadata Documents (docs/oauth.md "Client ID Metadata Documents";
     * draft-ietf-oauth-client-id-metadata-document): a client_id that is an HTTPS URL is fetched
     * under the outbound guard, within these limits, and cached by its HTTP cache headers
     * clamped to [cacheMinS, cacheMaxS].
     */
    oauthClientDocuments: {
      /**
       * Local development and tests only: document URLs may be plain http and on loopback
       * (the draft's SSRF section forbids this in production). Private, link-local and
       * metadata addresses stay refused.
       */
      allowDevUrls: bool('OAUTH_CIMD_ALLOW_DEV_URLS', false),
      /** The whole fetch (DNS, connect, body) must finish within this; the authorize page waits on it. */
      timeoutMs: int('OAUTH_CIMD_TIMEOUT_MS', 5_000),
      /** The draft's recommended cap (8.7): 5 KB read at most; a longer document is refused. */
      maxBytes: int('OAUTH_CIMD_MAX_BYTES', 5 * 1024),
      /** Floor of the cache lifetime, whatever the headers say (no-store, max-age=0 included). */
      cacheMinS: int('OAUTH_CIMD_CACHE_MIN_S', 60),
      /** Ceiling of the cache lifetime: a changed document is seen within this. */
      cacheMaxS: int('OAUTH_CIMD_CACHE_MAX_S', 24 * 3600),
    },
    // Task queue priority and fairness keys on every start (lib/temporal/start/priority.ts,
    // docs/operations.md "Fairness between workspaces"); false starts workflows without them,
    // first come, first served, as before (the fairness bench's `--no-fairness`).
    temporalFairness: bool('TEMPORAL_FAIRNESS', true),
  };
}

export type Config = ReturnType<typeof loadConfig>;
export type PlanName = keyof Config['plans'];
export const PLAN_NAMES = ['FREE', 'STARTER', 'ADVANCED', 'BUSINESS', 'ENTERPRISE'] as const;

export const config: Config = loadConfig();

/** Where one outside service is, and whether it is the local one `npm start` runs. */
export interface ServiceAddress {
  address: string;
  /** Unset address variable: the embedded server or simulator on `port` (bin/start.ts starts it). */
  local: boolean;
  port: number;
}

/**
 * Every outside service's address: the one its variable names, else the local server or
 * simulator on its configured port. `npm start` starts the local ones and hands these addresses
 * to its children (serviceEnv); the API, the worker and bin/admin connect through them, so an
 * operator command beside a stack on other ports finds it with the same variables.
 * `llm` is null when LLM_WRITER=builtin: nothing is called.
 */
export function serviceAddresses(c: Config = config) {
  const local = (address: string | undefined, port: number, url: (p: number) => string): ServiceAddress =>
    address ? { address, local: false, port } : { address: url(port), local: true, port };
  const http =
    (path = '') =>
    (p: number) =>
      `http://127.0.0.1:${p}${path}`;
  return {
    temporal: local(c.temporalAddress, c.temporalPort, (p) => `127.0.0.1:${p}`),
    objectStore: local(c.s3.endpoint, c.s3.serverPort, http()),
    network: local(c.network.apiUrl, c.network.simulatorPort, http()),
    llm: c.llm.writer === 'builtin' ? null : local(c.llm.baseUrl, c.llm.simulatorPort, http('/v1')),
    images: c.images.generator === 'builtin' ? null : local(c.images.baseUrl ?? c.llm.baseUrl, c.llm.simulatorPort, http('/v1')),
    transcription: local(c.transcription.url, c.transcription.simulatorPort, http('/v1')),
    youtube: local(c.knowledge.youtubeTranscriptUrl, c.knowledge.youtubeSimulatorPort, http()),
  };
}

/** The address variables of serviceAddresses, as `npm start` passes them to the API and the worker. */
export function serviceEnv(c: Config = config): Record<string, string> {
  const s = serviceAddresses(c);
  return {
    TEMPORAL_ADDRESS: s.temporal.address,
    S3_ENDPOINT: s.objectStore.address,
    NETWORK_API_URL: s.network.address,
    ...(s.llm ? { LLM_BASE_URL: s.llm.address } : {}),
    TRANSCRIPTION_URL: s.transcription.address,
    YOUTUBE_TRANSCRIPT_URL: s.youtube.address,
  };
}

/** Node options a worker process starts with (`npm start`, `npm run start:worker`): its heap limit. */
export function workerNodeArgs(heapMiB: number = config.worker.heapMiB): string[] {
  return [workerHeapArg(heapMiB)];
}

export function planLimits(plan: string): PlanLimits {
  return (config.plans as Record<string, PlanLimits>)[plan] ?? config.plans.FREE;
}
