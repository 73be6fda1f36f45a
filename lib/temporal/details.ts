// The text an operator reads in the Temporal UI (docs/operations.md "What the workflows show"):
// a workflow's current details (`setCurrentDetails`, answered through the SDK's
// `__temporal_workflow_metadata` query) and its timers' summaries. Imported by workflow code,
// so pure: no Node, no clock of its own (callers pass the workflow's time).

import { zoneFormat } from '../zoneFormat';

/**
 * An instant as wall time in `timeZone` with its offset, e.g. `2026-12-01 09:00:30 Europe/Paris
 * (GMT+01:00)`; in UTC when the zone is missing or unknown to this runtime's ICU (a bad zone
 * must not fail a workflow task over a line of text).
 */
export function zonedTime(ms: number, timeZone?: string | null): string {
  let zone = timeZone || 'UTC';
  let f: Intl.DateTimeFormat;
  try {
    f = zoneFormat(zone, true);
  } catch {
    zone = 'UTC';
    f = zoneFormat(zone, true);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  const offset = p.timeZoneName === 'GMT' ? 'GMT+00:00' : p.timeZoneName;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${zone} (${offset})`;
}

/** A span for people: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ''}`;
}

/** One line, bounded: error texts can be long and multi-line, a summary is one line. */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
