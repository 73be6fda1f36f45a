import { config } from '../lib/config';
import { closeDb, db, migrateLatest } from '../lib/db';
import { log } from '../lib/logger';
import { preflightOrExit } from '../lib/preflight';
import { closeRedis } from '../lib/redis';
import { createApp } from './app';
import { closeAuthSubscriber } from './auth/apiKeys';

// The API process: REST + OAuth origin on PORT. Migrates on start so a fresh database works.
async function main() {
  await preflightOrExit({ databaseUrl: config.databaseUrl, redisUrl: config.redisUrl });
  const applied = await migrateLatest(db());
  if (applied.length) log.info('migrations applied', { applied });
  const server = createApp().listen(config.port, () => log.info('api listening', { url: config.publicUrl, port: config.port }));
  server.keepAliveTimeout = 65_000;

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info('api stopping');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    closeAuthSubscriber();
    await Promise.allSettled([closeDb(), closeRedis()]);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  log.error('api failed to start', { err });
  process.exit(1);
});
