import type { Context } from 'koa';
import * as z from 'zod';
import { personActor } from '../core/access/authenticate';
import { verifyPassword, hashPassword, MAX_PASSWORD_LENGTH } from '../core/access/passwords';
import { EMAIL, viewPerson, type Person } from '../core/access/people-store';
import { BREAK_GLASS_SUBJECT } from '../core/access/session-store';
import { ApiError } from '../core/errors';
import { accessOf, principalOf } from './auth';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { readBody } from './json-body';
import { SESSION_COOKIE, setSessionCookie } from './session-cookie';

const Password = z.string().min(1).max(MAX_PASSWORD_LENGTH);

/**
 * A person signs in with e-mail and password. The admin token alone opens a break-glass session
 * (audited); with an e-mail and a password, on a relay without people, it creates the first admin.
 */
const SignInBody = z.union([
  z.strictObject({ email: EMAIL, password: Password }),
  z.strictObject({ token: z.string().min(1).max(512), email: EMAIL.optional(), password: Password.optional() }),
]);

const ChangePasswordBody = z.strictObject({ current: Password, password: Password });
const WelcomeBody = z.strictObject({ password: Password });

/** Checked against when the e-mail is unknown, so that a wrong e-mail takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

function address(ctx: Context): string {
  return ctx.ip;
}

/** Signing in and out of the console, one's own password, and invitations. */
export function registerSessionRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  const { service: access, sessions, limiter, authenticator } = deps.access;

  async function openSession(ctx: Context, subject: string, epoch: number): Promise<void> {
    const { id } = await sessions.open(subject, epoch, address(ctx));
    setSessionCookie(ctx, id, deps.access.sessionLimits.absoluteMs);
  }

  async function signInPerson(ctx: Context, email: string, password: string): Promise<Person> {
    const wait = await limiter.blockedFor(email, address(ctx));
    if (wait > 0) throw new ApiError('ERR_ADMIN_SIGN_IN_LIMITED', undefined, undefined, { 'Retry-After': String(wait) });
    const person = await access.people.byEmail(email);
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    const ok = person?.passwordHash ? await verifyPassword(password, person.passwordHash) : (await verifyPassword(password, await decoy), false);
    if (!person || !ok) {
      await limiter.failed(email, address(ctx));
      if (person) accessOf(ctx).actor = personActor(person);
      throw new ApiError('ERR_ADMIN_UNAUTHORIZED', 'Wrong e-mail or password.', 'password');
    }
    await limiter.succeeded(email, address(ctx));
    accessOf(ctx).actor = personActor(person);
    return person;
  }

  routes.post('/session', 'open', async (ctx) => {
    const body = await readBody(ctx, SignInBody);
    if ('token' in body) {
      if (!authenticator.isAdminToken(body.token)) throw new ApiError('ERR_ADMIN_UNAUTHORIZED', 'That is not the admin token (see DATA_DIR/admin-token or ADMIN_TOKEN).', 'token');
      const glass = await authenticator.breakGlass();
      if (!glass.ok) throw new ApiError('ERR_ADMIN_UNAUTHORIZED', glass.message, 'token');
      accessOf(ctx).actor = glass.principal.actor;
      if (body.email !== undefined || body.password !== undefined) {
        // The first admin comes from the admin token: whoever holds it names the first account.
        if ((await access.people.count()) > 0) throw new ApiError('ERR_ADMIN_CONFLICT', 'This relay has people already: an admin adds more (People, or POST /admin/api/people).', 'email');
        if (!body.email || !body.password) throw new ApiError('ERR_ADMIN_INVALID', 'The first admin needs an e-mail and a password.', body.email ? 'password' : 'email');
        const { person } = await access.addPerson({ email: body.email, password: body.password, role: 'admin' }, glass.principal.actor);
        const created = (await access.people.get(person.id))!;
        accessOf(ctx).actor = personActor(created);
        await openSession(ctx, created.id, created.epoch);
        ctx.status = 201;
        ctx.body = { person: viewPerson(created) };
        return;
      }
      await openSession(ctx, BREAK_GLASS_SUBJECT, 0);
      ctx.status = 204;
      return;
    }
    const person = await signInPerson(ctx, body.email, body.password);
    await openSession(ctx, person.id, person.epoch);
    ctx.status = 204;
  });

  // Who is signed in and what they may do: the console draws itself from this.
  routes.get('/session', 'signed-in', async (ctx) => {
    const p = principalOf(ctx);
    ctx.body = {
      via: p.via,
      ...(p.via === 'break-glass' ? { firstAdminNeeded: (await access.people.count()) === 0 } : {}),
      actor: p.actor,
      ...(p.person ? { person: viewPerson(p.person) } : {}),
      rights: { admin: p.rights.admin, trackers: p.rights.trackers, ...(p.rights.scopes ? { scopes: [...p.rights.scopes] } : {}) },
    };
  });

  routes.delete('/session', 'open', async (ctx) => {
    const id = ctx.cookies.get(SESSION_COOKIE);
    if (id) {
      const found = await authenticator.session(id);
      if (found.ok) accessOf(ctx).actor = found.principal.actor;
      await sessions.end(id);
    }
    setSessionCookie(ctx, null);
    ctx.status = 204;
  });

  // Whether the relay still needs its first admin: the sign-in page asks before anyone is signed in.
  routes.get('/session/setup', 'open', async (ctx) => {
    ctx.body = { firstAdminNeeded: (await access.people.count()) === 0 };
  });

  // A new password ends every session of the person, this one included; this browser gets a new one.
  routes.post('/session/password', 'person', async (ctx) => {
    const person = principalOf(ctx).person;
    if (!person) throw new ApiError('ERR_ADMIN_INVALID', 'The break-glass admin token has no password to change.');
    const { current, password } = await readBody(ctx, ChangePasswordBody);
    if (!person.passwordHash || !(await verifyPassword(current, person.passwordHash))) throw new ApiError('ERR_ADMIN_INVALID', 'The current password is wrong.', 'current');
    await access.setPassword(person.id, password);
    const after = (await access.people.get(person.id))!;
    await openSession(ctx, after.id, after.epoch);
    ctx.status = 204;
  });

  routes.get('/welcome/:code', 'open', async (ctx) => {
    const person = await access.invitee(ctx.params.code!);
    ctx.body = { email: person.email, name: person.name };
  });

  routes.post('/welcome/:code', 'open', async (ctx) => {
    const { password } = await readBody(ctx, WelcomeBody);
    const person = await access.acceptInvitation(ctx.params.code!, password);
    accessOf(ctx).actor = personActor(person);
    await openSession(ctx, person.id, person.epoch);
    ctx.status = 204;
  });
}
