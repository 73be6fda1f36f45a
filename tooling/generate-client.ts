// `npm run client:generate`: writes client/schema.d.ts, the typed client's types, from the
// OpenAPI document (tooling/openapiClient.ts).
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CLIENT_SCHEMA_PATH, generateClientSchema } from './openapiClient';

const text = await generateClientSchema();
await writeFile(CLIENT_SCHEMA_PATH, text);
console.log(`client types: ${fileURLToPath(CLIENT_SCHEMA_PATH)} (${Math.round(text.length / 1024)} KiB)`);
process.exit(0);
