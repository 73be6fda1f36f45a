// spec 2.15: role slugs and the labels they fold into.
export const ROLE_LABELS: Record<string, 'Admin' | 'Member' | 'Client'> = {
  admin: 'Admin',
  personal_brand: 'Member',
  client: 'Client',
  // legacy slugs
  team_manager: 'Admin',
  content_assistant: 'Admin',
  personal_brand_team_insights: 'Member',
};

/** Accepts a label (Admin/Member/Client, any case) or a slug; returns the stored slug. */
export function roleSlug(input: string): string | null {
  const lower = input.trim().toLowerCase();
  if (lower === 'admin') return 'admin';
  if (lower === 'member') return 'personal_brand';
  if (lower === 'client') return 'client';
  return lower in ROLE_LABELS ? lower : null;
}

export function roleLabel(slug: string): 'Admin' | 'Member' | 'Client' {
  return ROLE_LABELS[slug] ?? 'Member';
}
