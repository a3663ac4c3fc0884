/**
 * The keys of people, sessions, tokens and the audit log, all under the relay's global prefix (one
 * slot on a Redis Cluster: config.ts makes the prefix a hash tag there), so that a change and its
 * index move together in one MULTI.
 */
export function accessKeys(prefix: string) {
  const base = `${prefix}:access`;
  return {
    /** Hash: person id → person JSON. */
    people: `${base}:people`,
    /** Hash: lower-cased e-mail → person id. */
    emails: `${base}:emails`,
    /** String: a console session's JSON, by the digest of its id; expires when idle. */
    session: (digest: string) => `${base}:session:${digest}`,
    /** String: an invitation (set your password) → person id, by the digest of its code. */
    invite: (digest: string) => `${base}:invite:${digest}`,
    /** Hash: token id → token JSON (its digest, never the token). */
    tokens: `${base}:tokens`,
    /** Hash: token id → when it was last used. */
    tokenUse: `${base}:token-use`,
    /** String `off` when the break-glass admin token is switched off. */
    breakGlass: `${base}:break-glass`,
    /** Failed sign-ins, counted per e-mail and per address over a window. */
    loginFailures: (who: string) => `${base}:login-failures:${who}`,
    /** Stream of audit entries. */
    audit: `${base}:audit`,
    /** Pub/sub channel: a person or token changed; processes drop what they cached. */
    changes: `${base}:changes`,
  };
}

export type AccessKeys = ReturnType<typeof accessKeys>;
