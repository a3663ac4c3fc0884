import { INSTANCE_ROLES, TRACKER_ROLES, type InstanceRole, type TrackerRole } from './access-types.js';
import { Field } from './components.js';
import type { Tracker } from './types.js';

export type Grants = Record<string, TrackerRole>;

const ROLE_LABELS: Record<TrackerRole, string> = { viewer: 'Viewer — health, charts, integration', editor: 'Editor — also changes and records' };

/** `shop: viewer, blog: editor`, or what an empty set means. */
export function grantsText(grants: Grants, none = 'no tracker'): string {
  const entries = Object.entries(grants);
  return entries.length === 0 ? none : entries.map(([id, role]) => `${id}: ${role}`).join(', ');
}

/**
 * A role picker per tracker (no access, viewer, editor). Grants on a tracker that no longer exists
 * are listed too, by id, so they can be taken away.
 */
export function GrantsPicker({ trackers, value, onChange, legend = 'Role per tracker' }: { trackers: Tracker[]; value: Grants; onChange: (g: Grants) => void; legend?: string }) {
  const known = new Set(trackers.map((t) => t.id));
  const rows = [...trackers.map((t) => ({ id: t.id, name: t.name })), ...Object.keys(value).filter((id) => !known.has(id)).map((id) => ({ id, name: id }))];
  const set = (id: string, role: string) => {
    const next = { ...value };
    if (role === '') delete next[id];
    else next[id] = role as TrackerRole;
    onChange(next);
  };
  return (
    <fieldset class="grants">
      <legend>{legend}</legend>
      {rows.length === 0 ? (
        <p class="empty">No tracker yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <tbody>
              {rows.map((t) => (
                <tr key={t.id}>
                  <th scope="row">
                    {t.name} <code class="muted">{t.id}</code>
                  </th>
                  <td>
                    <select aria-label={`Role on ${t.name}`} value={value[t.id] ?? ''} onChange={(e) => set(t.id, e.currentTarget.value)}>
                      <option value="">No access</option>
                      {TRACKER_ROLES.map((r) => (
                        <option key={r} value={r}>
                          {ROLE_LABELS[r]}
                        </option>
                      ))}
                    </select>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </fieldset>
  );
}

const ROLE_TEXT: Record<InstanceRole, string> = { admin: 'Admin — every tracker, people, tokens, audit', member: 'Member — the trackers granted below' };

/** The relay-wide role of a person: admin, or member with the grants below it. */
export function RoleField({ value, onChange }: { value: InstanceRole; onChange: (role: InstanceRole) => void }) {
  return (
    <Field label="Role">
      {(p) => (
        <select {...p} value={value} onChange={(e) => onChange(e.currentTarget.value as InstanceRole)}>
          {INSTANCE_ROLES.map((r) => (
            <option key={r} value={r}>
              {ROLE_TEXT[r]}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
