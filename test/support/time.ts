// Instants relative to now, as the API takes them (spec: timestamps are UTC ISO 8601).

/** The ISO 8601 instant `s` seconds from now (negative: in the past). */
export const inSeconds = (s: number): string => new Date(Date.now() + s * 1000).toISOString();
