import { defineNoun, type Args } from '../registry';

const provision = () => import('../../provision');

// Passwords are accepted but never printed. --password-stdin exists because a password given
// as a flag lands in shell history and in the process list.

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (then Enter, Ctrl-D): ');
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  // Only the line ending a shell or `echo` adds; inner and leading spaces are the user's.
  return text.replace(/\r?\n$/, '');
}

function checkPasswordFlags(args: Args): void {
  if (args.has('password') && args.bool('password-stdin')) throw args.usage('give --password or --password-stdin, not both');
  const flag = args.string('password');
  if (flag !== undefined && flag.length < 8) throw args.usage('the password must be at least 8 characters');
}

async function passwordFrom(args: Args, required: boolean): Promise<string | undefined> {
  const password = args.bool('password-stdin') ? await readStdin() : args.string('password');
  if (password === undefined) {
    if (required) throw args.usage('missing --password or --password-stdin');
    return undefined;
  }
  if (password.length < 8) throw args.usage('the password must be at least 8 characters');
  return password;
}

const passwordFlags = {
  password: { value: 'PASSWORD', help: 'sign-in password, at least 8 characters (visible in shell history; prefer --password-stdin)' },
  'password-stdin': { type: 'boolean' as const, help: 'read the password from standard input' },
};

export default defineNoun('user', 'People who sign in (members of workspaces, OAuth consenters).', {
  create: {
    summary: 'Create a user (a person who can sign in and consent to OAuth clients).',
    flags: {
      email: { required: true, value: 'EMAIL', help: 'sign-in email, unique (case-insensitive)' },
      name: { value: 'NAME', help: 'full name' },
      ...passwordFlags,
    },
    examples: ['--email ann@example.com --name "Ann Lee" --password-stdin'],
    check(args) {
      const email = args.need('email').trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw args.usage(`--email "${email}" is not an email address`);
      checkPasswordFlags(args);
    },
    async run(args) {
      const email = args.need('email').trim();
      const password = await passwordFrom(args, false);
      const [{ AdminError, createUser }, { db }, { userView }] = await Promise.all([
        provision(),
        import('../../../lib/db'),
        import('../views'),
      ]);
      const existing = await db()('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first('id');
      if (existing) throw new AdminError(`a user with email ${email.toLowerCase()} already exists (${existing.id})`);
      const user = await createUser({ email, name: args.string('name'), password });
      return userView({ ...user, has_password: password !== undefined });
    },
  },
  'set-password': {
    summary: 'Set or replace the password of a user.',
    flags: {
      user: { required: true, value: 'EMAIL|usr_x', help: 'the user' },
      ...passwordFlags,
    },
    check(args) {
      checkPasswordFlags(args);
      if (!args.has('password') && !args.bool('password-stdin')) throw args.usage('missing --password or --password-stdin');
    },
    async run(args) {
      const password = await passwordFrom(args, true);
      const { setUserPassword } = await provision();
      const user = await setUserPassword(args.need('user'), password!);
      return { ...user, hasPassword: true };
    },
  },
  list: {
    summary: 'List users with the workspaces they belong to (no password data).',
    async run() {
      const [{ listUsers }, { userView }] = await Promise.all([provision(), import('../views')]);
      return (await listUsers()).map(userView);
    },
  },
});
