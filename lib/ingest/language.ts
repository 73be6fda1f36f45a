// A small language guess for extracted text (docs/sources.md "language"): the share of each
// language's commonest function words among the first few thousand words. Good enough to name
// en/fr/de/es/nl/pt/it on a paragraph or more; null when no language stands out.

const MARKERS: Record<string, string> = {
  en: 'the and of to is in that it for with as was on are be this have not but they you at by from',
  fr: 'le la les et des est une un du que qui dans pour pas sur au avec ce il elle nous vous sont',
  de: 'der die das und ist nicht ein eine zu den mit sich des auf für im dem auch es sie wir sind',
  es: 'el la los las y de que en un una es por con para no se del al lo como más pero sus',
  nl: 'de het een en van is dat niet op te zijn voor met die er aan ook als maar wij',
  pt: 'o a os as e de que em um uma é não para com do da dos das se por mais como',
  it: 'il la le e di che è un una per non in con del della sono si anche come più gli',
};
const SETS = Object.fromEntries(Object.entries(MARKERS).map(([l, w]) => [l, new Set(w.split(' '))]));

export function guessLanguage(text: string): string | null {
  const words = (
    text
      .slice(0, 20_000)
      .toLowerCase()
      .match(/\p{L}+/gu) ?? []
  ).slice(0, 3_000);
  if (words.length < 5) return null;
  let best: string | null = null;
  let bestScore = 0;
  let second = 0;
  for (const [lang, set] of Object.entries(SETS)) {
    let hits = 0;
    for (const w of words) if (set.has(w)) hits++;
    const score = hits / words.length;
    if (score > bestScore) {
      second = bestScore;
      bestScore = score;
      best = lang;
    } else if (score > second) second = score;
  }
  // Too few function words, or two languages alike: say nothing rather than guess.
  if (bestScore < 0.05 || bestScore < second * 1.2) return null;
  return best;
}
