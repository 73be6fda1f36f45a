// The Postgres text-search configuration a document's chunks are indexed in, from its language
// (docs/knowledge.md "Search"; a language not declared is guessed by lib/ingest/language.ts, the
// one guesser sources use too). The configurations are the stemmers Postgres ships; a language
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
