// Choices operators pick from, kept free of service imports so the CLI can list them in help
// without loading the database driver.

export const CONNECTION_PRESETS = ['connected', 'expiring_soon', 'degraded', 'disconnected', 'revoked', 'none'] as const;
export type ConnectionPreset = (typeof CONNECTION_PRESETS)[number];
