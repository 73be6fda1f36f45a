// Seed text for the benches: LinkedIn-style posts of 300-1,500 characters (paragraphs, line
// breaks, emoji, hashtags), deterministic (seeded PRNG), so two runs serve byte-identical pages.

export function prng(seed: number): () => number {
  // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOOKS = [
  'Three years ago I almost quit my job.',
  'Most teams get onboarding wrong.',
  'We shipped our biggest release yet — here is what we learned.',
  'Unpopular opinion: meetings are not the problem.',
  'I asked 40 founders the same question.',
  'The best hire I ever made had no degree.',
  'Our churn dropped 18% in one quarter. Nothing fancy.',
  'A customer email changed how I think about pricing.',
  'Stop writing documentation nobody reads.',
  'What a failed launch taught me about focus.',
];

const SENTENCES = [
  'We started by talking to the people who actually use the product every day.',
  'It turned out the bottleneck was not engineering but the handoff between teams.',
  'Nobody had written down what "done" meant, so everyone had a different answer.',
  'The fix took two afternoons; finding it took two months.',
  'Small, boring improvements compound faster than big bets.',
  'If you cannot explain the metric to a new hire, it is the wrong metric.',
  'We moved the weekly status meeting to a written update and got four hours back.',
  'Customers do not care about your roadmap; they care about their Tuesday.',
  'The team that writes the postmortem should not be the team that gets blamed.',
  'Hiring for curiosity beat hiring for a checklist of tools, every single time.',
  'Pricing is a product decision, not a spreadsheet exercise.',
  'Our best ideas came from support tickets, not brainstorms.',
  'A clear "no" is kinder than a vague "maybe later".',
  'We measured time-to-first-value and cut it from nine days to one.',
  'Most of the work was deleting things: features, fields, steps, approvals.',
  'Write the announcement before you build the feature; it tells you what matters.',
  'The dashboard nobody opens is the one you should turn off first.',
  'Feedback is a gift only when it arrives while it can still change something.',
  'It is easier to keep a customer than to explain to the board why you lost one.',
  'Momentum beats perfection in the first version; quality wins the second.',
];

const CLOSERS = [
  'What would you add?',
  'Curious how your team handles this 👇',
  'Agree or disagree?',
  'If this was useful, repost it for someone who needs it ♻️',
  'Thoughts?',
  'I would love to hear what worked for you.',
];

const TAGS = '#leadership #startups #productmanagement #saas #careers #engineering #growth #marketing #hiring #remotework'.split(' ');

/** One post body whose length falls between min and max characters. */
export function postContent(rand: () => number, min = 300, max = 1500): string {
  const target = min + Math.floor(rand() * (max - min));
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const closer = pick(CLOSERS);
  const tags = [...new Set(Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(TAGS)))].join(' ');
  const paragraphs: string[] = [pick(HOOKS)];
  const size = () => paragraphs.reduce((a, p) => a + p.length + 2, 0) + closer.length + 2 + tags.length;
  while (size() < target) {
    const p = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(SENTENCES)).join(' ');
    paragraphs.push(rand() < 0.25 ? `→ ${p}` : p);
  }
  paragraphs.push(closer, tags);
  const text = paragraphs.join('\n\n');
  if (text.length <= max) return text;
  // Cut on a code point: the API refuses half of an emoji's surrogate pair (422, not well-formed Unicode).
  const cut = text.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '');
  return `${cut.trimEnd()}…`;
}

export function titleOf(content: string): string {
  const first = content.split('\n')[0]!;
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}

/** Shuffles `xs` in place (Fisher–Yates, drawing from `rand`) and answers it. */
export function shuffle<T>(xs: T[], rand: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
