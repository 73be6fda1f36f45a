import { config } from '../lib/config';
import { errors } from '../lib/errors';

// spec 9: dated versions. Every behaviour that differs between versions is a named gate
// here, so handlers ask `gate(version, 'x')` instead of comparing dates themselves.
export type ApiVersion = (typeof config.apiVersions.supported)[number];

const GATES = {
  // spec 9.4: as of 2026-08-10, POST /v1/uploads needs sources:write or knowledge:write.
  uploadsRequireSourceOrKnowledgeScope: '2026-08-10',
} as const satisfies Record<string, ApiVersion>;

export type VersionGate = keyof typeof GATES;

export function gate(version: ApiVersion, name: VersionGate): boolean {
  return version >= GATES[name];
}

export function resolveVersion(header: string | undefined): ApiVersion {
  if (header === undefined || header.trim() === '') return config.apiVersions.current as ApiVersion;
  const v = header.trim();
  if ((config.apiVersions.supported as readonly string[]).includes(v)) return v as ApiVersion;
  throw errors.versionUnsupported(v);
}
