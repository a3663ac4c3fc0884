import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession, whoLabel } from './access.js';
import type { SessionInfo } from './access-types.js';
import { grantsText } from './grants-picker.js';
import { href } from './router.js';

/** What the signed-in session may do, in a line. */
export function rightsText(session: SessionInfo): string {
  if (session.via === 'break-glass') return 'The admin token opens everything; each use is in the audit log.';
  if (session.rights.admin) return 'Admin: every tracker, people, tokens and the audit log.';
  return `Member: ${grantsText(session.rights.trackers, 'no tracker yet (an admin grants them)')}.`;
}

/** The top bar's account menu: who is signed in, a way to change the password, and Sign out. */
export function AccountMenu({ onSignOut }: { onSignOut: () => void }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener('click', outside);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('click', outside);
      document.removeEventListener('keydown', escape);
    };
  }, [open]);

  const who = whoLabel(session);
  return (
    <div class="account" ref={box}>
      <button type="button" ref={toggle} class="button small ghost" aria-expanded={open} aria-controls="account-panel" onClick={() => setOpen((o) => !o)}>
        <span class="visually-hidden">Account: </span>
        {who}
        <span aria-hidden="true"> ▾</span>
      </button>
      {open && (
        <div id="account-panel" class="account-panel card" role="group" aria-label="Account">
          <p>
            Signed in as <strong>{who}</strong>
          </p>
          <p class="hint">{rightsText(session)}</p>
          <div class="actions">
            {session.person && (
              <a class="button small" href={href({ page: 'account' })} onClick={() => setOpen(false)}>
                Change password
              </a>
            )}
            <button type="button" class="button small" onClick={onSignOut}>
              Sign out
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
