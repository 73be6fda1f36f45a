// The offline post writer. It lets the whole service (and its tests) run without an LLM key,
// so it must be deterministic (same input, same post: tests and replays compare outputs), fast
// on the largest allowed source, and produce something a person could actually post.
//
// Method: extractive. Split the source into sentences, score each by how many of the source's
// recurring content words it carries, keep the best few in source order, and frame them with a
// hook (the opening sentence) and a closing line in the requested language. The body stays in
// the source's language: translating needs a model.

import { config } from '../config';
import type { PostWriter, WriteOptions, WriteResult } from './client';
import { LlmError } from './errors';
import { clampPost, MAX_POST_CHARS, type ContentType, type GenerationInput } from './prompts';
import { deriveTitle } from './title';

export const BUILTIN_MODEL = 'builtin-extractive-1';

type ClosingLanguage = 'en' | 'fr' | 'de' | 'es' | 'nl' | 'pt' | 'it';

const CLOSINGS: Record<ClosingLanguage, Record<ContentType, string>> = {
  en: {
    PERSONAL: "What has your experience been? I'd love to hear your thoughts.",
    BUSINESS_INTERNAL: 'What would you add? Share your thoughts with the team.',
    BUSINESS_EXTERNAL: 'How is your organization approaching this? Let us know in the comments.',
    EDUCATIONAL: 'Which of these will you try first?',
    UNKNOWN: 'What do you think?',
  },
  fr: {
    PERSONAL: "Et vous, quelle est votre expérience ? J'aimerais beaucoup avoir votre avis.",
    BUSINESS_INTERNAL: "Qu'ajouteriez-vous ? Partagez votre avis avec l'équipe.",
    BUSINESS_EXTERNAL: 'Comment votre organisation aborde-t-elle ce sujet ? Dites-le-nous en commentaire.',
    EDUCATIONAL: 'Lequel de ces points allez-vous essayer en premier ?',
    UNKNOWN: "Qu'en pensez-vous ?",
  },
  de: {
    PERSONAL: 'Welche Erfahrungen haben Sie damit gemacht? Ich bin gespannt auf Ihre Meinung.',
    BUSINESS_INTERNAL: 'Was würden Sie ergänzen? Teilen Sie Ihre Gedanken mit dem Team.',
    BUSINESS_EXTERNAL: 'Wie geht Ihr Unternehmen dieses Thema an? Schreiben Sie es uns in die Kommentare.',
    EDUCATIONAL: 'Welchen dieser Punkte probieren Sie zuerst aus?',
    UNKNOWN: 'Was meinen Sie?',
  },
  es: {
    PERSONAL: '¿Cuál ha sido tu experiencia? Me encantaría conocer tu opinión.',
    BUSINESS_INTERNAL: '¿Qué añadirías? Comparte tu opinión con el equipo.',
    BUSINESS_EXTERNAL: '¿Cómo aborda tu organización este tema? Cuéntanoslo en los comentarios.',
    EDUCATIONAL: '¿Cuál de estos puntos vas a probar primero?',
    UNKNOWN: '¿Qué opinas?',
  },
  nl: {
    PERSONAL: 'Wat is jouw ervaring? Ik ben benieuwd naar je mening.',
    BUSINESS_INTERNAL: 'Wat zou jij toevoegen? Deel je gedachten met het team.',
    BUSINESS_EXTERNAL: 'Hoe pakt jouw organisatie dit aan? Laat het ons weten in de reacties.',
    EDUCATIONAL: 'Welk van deze punten ga jij als eerste proberen?',
    UNKNOWN: 'Wat vind jij?',
  },
  pt: {
    PERSONAL: 'Qual tem sido a sua experiência? Adoraria saber a sua opinião.',
    BUSINESS_INTERNAL: 'O que você acrescentaria? Compartilhe sua opinião com a equipe.',
    BUSINESS_EXTERNAL: 'Como a sua organização está lidando com isso? Conte para nós nos comentários.',
    EDUCATIONAL: 'Qual destes pontos você vai experimentar primeiro?',
    UNKNOWN: 'O que você acha?',
  },
  it: {
    PERSONAL: 'Qual è la tua esperienza? Mi piacerebbe conoscere la tua opinione.',
    BUSINESS_INTERNAL: 'Cosa aggiungeresti? Condividi le tue idee con il team.',
    BUSINESS_EXTERNAL: 'Come sta affrontando questo tema la tua organizzazione? Faccelo sapere nei commenti.',
    EDUCATIONAL: 'Quale di questi punti proverai per primo?',
    UNKNOWN: 'Tu cosa ne pensi?',
  },
};

// Older clients send language names rather than tags.
const LANGUAGE_NAMES: Record<string, ClosingLanguage> = {
  english: 'en',
  french: 'fr',
  français: 'fr',
  francais: 'fr',
  german: 'de',
  deutsch: 'de',
  spanish: 'es',
  español: 'es',
  espanol: 'es',
  castellano: 'es',
  dutch: 'nl',
  nederlands: 'nl',
  portuguese: 'pt',
  português: 'pt',
  portugues: 'pt',
  italian: 'it',
  italiano: 'it',
};

/** The closing-line language for a requested language; English when we have no translation. */
export function closingLanguage(language: string): ClosingLanguage {
  const l = language.trim().toLowerCase();
  const primary = l.split(/[-_\s]/)[0] ?? '';
  if (primary in CLOSINGS) return primary as ClosingLanguage;
  return LANGUAGE_NAMES[l] ?? 'en';
}

export function closingLine(language: string, contentType: ContentType): string {
  const set = CLOSINGS[closingLanguage(language)];
  return set[contentType] ?? set.UNKNOWN;
}

// Body sentences per content type. Company posts read better short; teaching posts need a few
// points to be worth a list.
const BODY_SENTENCES: Record<ContentType, number> = {
  PERSONAL: 5,
  BUSINESS_INTERNAL: 4,
  BUSINESS_EXTERNAL: 3,
  EDUCATIONAL: 5,
  UNKNOWN: 4,
};

const HOOK_MAX_CHARS = 150;
const SENTENCE_MAX_CHARS = 300;

// Function words of the closing languages: without them, "the" and "de" would be every
// source's most important word.
const STOP_WORDS = new Set(
  (
    'the and for are but not you your yours with this that these those there their they them then than have has had ' +
    'was were will would can could should shall may might must our ours out who whom what when where which while why how ' +
    'all any each few more most other some such into from about over under again once only own same very just also ' +
    "its it's been being did does doing too off yet because until between through during before after above below " +
    'les des une est pas pour par sur dans avec qui que quoi ces ses son sont nous vous ils elles mais ont été être ' +
    'aux leur leurs plus comme tout tous cette cet sans chez très aussi ' +
    'der die das und ist nicht ein eine einen dem den des mit auf für von sich auch wie wir sie ihr sind war ' +
    'aber oder wenn noch nach bei aus zum zur über unter mehr sehr ' +
    'los las del por para con una uno unos unas que mas más pero sus como esta este estos está son fue ' +
    'het een van dat zijn voor met niet aan ook maar wel dan hun ons onze deze dit wat ' +
    'uma por para com não nos nas dos das seu sua mais mas como isso este esta são foi ' +
    'della delle degli dei con per una uno non che sono come anche più questo questa nel nella'
  ).split(' '),
);

// Author instructions ("Write a post about...", "Tone: upbeat") belong in the prompt of a real
// model; quoted back verbatim they would be the worst line of the post. English only: the
// other languages' imperatives are too varied for a list this small.
const INSTRUCTION =
  /^(?:please\s+)?(?:write|draft|create|generate|make\s+(?:it|this|the\s+post)|keep\s+it|use\s+(?:a|an|the)\s|focus\s+on|mention|include|avoid|don'?t|do\s+not|tone\s*:|audience\s*:|target\s*:|style\s*:|format\s*:)/i;

const SENTENCE_BREAK = /(?<=[.!?…]["'”’»)\]]?)\s+|(?<=[。！？])/u;
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;
const LIST_MARKER = /^\s*(?:[-*•▪►→+]|\d{1,2}[.)])\s+/u;

interface Sentence {
  text: string;
  index: number;
  /** Distinct content words, lower-cased. */
  terms: string[];
  wordCount: number;
  instruction: boolean;
}

/** The post text for an input; pure and synchronous so that the LLM simulator can reuse it. */
export function composePost(input: GenerationInput): string {
  const sentences = splitSentences(input.sourceText);
  const closing = closingLine(input.language, input.contentType);
  if (sentences.length === 0) {
    return `${shorten(input.sourceText.replace(/\s+/g, ' ').trim(), HOOK_MAX_CHARS)}\n\n${closing}`;
  }

  const usable = sentences.filter((s) => !s.instruction);
  const pool = usable.length > 0 ? usable : sentences;
  const hook = pool[0]!;
  const chosen = pickKeySentences(pool, hook, BODY_SENTENCES[input.contentType] ?? BODY_SENTENCES.UNKNOWN);

  const fact = knowledgeFact(input.knowledge, pool);
  const blocks = [
    shorten(hook.text, HOOK_MAX_CHARS),
    ...arrangeBody(
      chosen.map((s) => s.text),
      input.contentType,
    ),
    ...(fact ? [fact] : []),
    closing,
  ];
  return clampPost(blocks.join('\n\n'), MAX_POST_CHARS);
}

/**
 * Grounding (docs/knowledge.md): the knowledge sentence that shares the most content words with
 * the source (ties: the earlier passage, then the earlier sentence), quoted as its own paragraph
 * so a reader (and a test) can see the post drew on the knowledge base. Null without knowledge
 * or without any sentence that shares a word.
 */
function knowledgeFact(knowledge: GenerationInput['knowledge'], pool: Sentence[]): string | null {
  if (!knowledge?.length) return null;
  const sourceTerms = new Set(pool.flatMap((s) => s.terms));
  let best: { text: string; score: number } | null = null;
  for (const passage of knowledge) {
    for (const s of splitSentences(passage.text)) {
      if (s.wordCount < 4 || s.instruction) continue;
      const score = s.terms.filter((t) => sourceTerms.has(t)).length;
      if (score > 0 && (!best || score > best.score)) best = { text: s.text, score };
    }
  }
  if (!best) return null;
  return shorten(best.text, SENTENCE_MAX_CHARS);
}

function splitSentences(source: string): Sentence[] {
  const out: Sentence[] = [];
  const lines = source
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, ' ')
    .split('\n');
  for (const rawLine of lines) {
    const line = rawLine
      .replace(LIST_MARKER, '')
      .replace(/^\s*#{1,6}\s+/, '')
      .replace(/\*\*|__|`/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (line === '') continue;
    for (const part of line.split(SENTENCE_BREAK)) {
      for (const piece of chunk(part.trim())) {
        if (!/[\p{L}\p{N}]/u.test(piece)) continue;
        const words = piece.toLowerCase().match(WORD) ?? [];
        const terms = new Set<string>();
        for (const w of words) if (w.length >= 3 && !STOP_WORDS.has(w)) terms.add(w);
        out.push({ text: piece, index: out.length, terms: [...terms], wordCount: words.length, instruction: INSTRUCTION.test(piece) });
      }
    }
  }
  return out;
}

// Sources without punctuation (transcripts, pasted tables) would otherwise be one 100 kB
// "sentence" that no post can hold.
function chunk(text: string): string[] {
  if (text.length <= SENTENCE_MAX_CHARS) return text ? [text] : [];
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > SENTENCE_MAX_CHARS) {
    let cut = rest.lastIndexOf(' ', SENTENCE_MAX_CHARS - 1);
    if (cut < SENTENCE_MAX_CHARS / 2) cut = SENTENCE_MAX_CHARS - 1;
    pieces.push(`${rest.slice(0, cut).trimEnd()}…`);
    rest = rest.slice(cut).trimStart();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

function pickKeySentences(pool: Sentence[], hook: Sentence, count: number): Sentence[] {
  // Document frequency (per sentence, not per occurrence) so one repetitive line cannot
  // dominate the vocabulary.
  const df = new Map<string, number>();
  for (const s of pool) for (const w of s.terms) df.set(w, (df.get(w) ?? 0) + 1);
  let maxDf = 1;
  for (const v of df.values()) if (v > maxDf) maxDf = v;

  const early = Math.max(5, Math.ceil(pool.length * 0.2));
  const scored = pool
    .filter((s) => s !== hook)
    .map((s, order) => {
      let sum = 0;
      for (const w of s.terms) sum += df.get(w)!;
      let score = sum / maxDf / Math.sqrt(s.terms.length + 1);
      // Authors put their point first; early sentences get a modest edge.
      score *= 1 + 0.25 * Math.max(0, 1 - order / early);
      if (s.wordCount < 5) score *= 0.4;
      else if (s.wordCount > 40) score *= 0.7;
      return { s, score };
    });
  scored.sort((a, b) => b.score - a.score || a.s.index - b.s.index);

  const seen = new Set([normalizeForCompare(hook.text)]);
  const picked: Sentence[] = [];
  for (const { s } of scored) {
    if (picked.length >= count) break;
    const key = normalizeForCompare(s.text);
    if (seen.has(key)) continue;
    seen.add(key);
    picked.push(s);
  }
  return picked.sort((a, b) => a.index - b.index);
}

function arrangeBody(sentences: string[], contentType: ContentType): string[] {
  if (sentences.length === 0) return [];
  if (contentType === 'EDUCATIONAL' && sentences.length >= 3) {
    const [intro, ...points] = sentences;
    return [intro!, points.map((p, i) => `${i + 1}. ${p}`).join('\n')];
  }
  if (contentType === 'BUSINESS_EXTERNAL') return sentences;
  // Two to four paragraphs of one or two sentences: short blocks are what people read on a feed.
  const paragraphs = Math.min(4, Math.max(Math.min(2, sentences.length), Math.ceil(sentences.length / 2)));
  const out: string[] = [];
  const per = sentences.length / paragraphs;
  for (let p = 0; p < paragraphs; p++) {
    out.push(sentences.slice(Math.round(p * per), Math.round((p + 1) * per)).join(' '));
  }
  return out.filter((p) => p !== '');
}

function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(' ', max - 1);
  return `${text.slice(0, cut > max / 2 ? cut : max - 1).replace(/[\s,;:\-–—]+$/u, '')}…`;
}

function normalizeForCompare(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export class BuiltinWriter implements PostWriter {
  private readonly costCents: number;

  constructor(opts: { costCents?: number } = {}) {
    this.costCents = opts.costCents ?? config.llm.builtinCostCents;
  }

  async write(input: GenerationInput, opts: WriteOptions = {}): Promise<WriteResult> {
    const progress = opts.onProgress ?? (() => {});
    const step = (fraction: number, message: string) => {
      opts.signal?.throwIfAborted();
      progress(fraction, message);
    };
    if (input.sourceText.trim() === '') {
      throw new LlmError('llm_bad_request', 'The source text is empty.');
    }
    step(0.1, 'Reading the source');
    step(0.4, 'Picking the key points');
    const content = composePost(input);
    step(0.9, 'Writing the post');
    if (content.trim() === '') throw new LlmError('llm_empty_output', 'The source produced no usable text.');
    const result: WriteResult = {
      content,
      title: deriveTitle(content),
      // No model ran; reporting tokens would inflate usage meters with invented numbers.
      usage: { promptTokens: 0, completionTokens: 0 },
      costCents: this.costCents,
      model: BUILTIN_MODEL,
    };
    step(1, 'Done');
    return result;
  }
}
