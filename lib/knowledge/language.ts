// A document's language and the Postgres text-search configuration its chunks are indexed in
// (docs/knowledge.md "Search"). The configurations are the stemmers Postgres ships; a language
// without one (or an unknown one) is indexed with `simple`, which still matches whole words.

export const REGCONFIGS: Record<string, string> = {
  ar: 'arabic',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  fi: 'finnish',
  fr: 'french',
  hu: 'hungarian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  nl: 'dutch',
  no: 'norwegian',
  nb: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sv: 'swedish',
  tr: 'turkish',
};

/** Every configuration a chunk can be indexed in: a search query is parsed in each of them. */
export const SEARCH_CONFIGS: readonly string[] = ['simple', ...new Set(Object.values(REGCONFIGS))].sort();

/** The text-search configuration for a BCP 47 tag (`en`, `en-GB`, `pt_BR`); `simple` when none fits. */
export function regconfigFor(language: string | null | undefined): string {
  if (!language) return 'simple';
  const primary = language.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return REGCONFIGS[primary] ?? 'simple';
}

// A few of the most frequent function words per language: enough to tell the languages of the
// built-in writer apart on a paragraph, never a substitute for a declared language.
const MARKERS: Record<string, string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'it', 'for', 'with', 'this', 'are', 'was', 'you'],
  fr: ['le', 'la', 'les', 'et', 'des', 'est', 'une', 'dans', 'que', 'pour', 'qui', 'pas', 'sur', 'avec'],
  de: ['der', 'die', 'das', 'und', 'ist', 'nicht', 'ein', 'eine', 'mit', 'auf', 'für', 'sich', 'den', 'auch'],
  es: ['el', 'los', 'las', 'del', 'que', 'por', 'para', 'con', 'una', 'es', 'como', 'pero', 'más', 'está'],
  nl: ['het', 'een', 'van', 'dat', 'zijn', 'voor', 'met', 'niet', 'ook', 'maar', 'wel', 'naar', 'deze', 'wordt'],
  pt: ['os', 'as', 'uma', 'não', 'com', 'para', 'mais', 'mas', 'como', 'são', 'foi', 'seu', 'sua', 'isso'],
  it: ['il', 'della', 'che', 'non', 'per', 'sono', 'una', 'con', 'anche', 'più', 'questo', 'nel', 'gli', 'degli'],
};

/** The most likely language of a text among those above, or null when too little says so. */
export function detectLanguage(text: string): string | null {
  const words =
    text
      .slice(0, 20_000)
      .toLowerCase()
      .match(/[\p{L}]+/gu) ?? [];
  if (words.length < 8) return null;
  const counts = new Map<string, number>();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  let best: string | null = null;
  let bestScore = 0;
  for (const [lang, markers] of Object.entries(MARKERS)) {
    let score = 0;
    for (const m of markers) score += counts.get(m) ?? 0;
    if (score > bestScore) {
      best = lang;
      bestScore = score;
    }
  }
  return bestScore / words.length >= 0.05 ? best : null;
}
