import { accessApi } from './access-api.js';
import { api } from './api.js';
import { AuditLog } from './audit-log.js';
import { useLoad } from './hooks.js';
import { usePageTitle } from './page-title.js';

/** The relay's audit log (admins): every change and every refused attempt, who, when, from where. */
export function AuditPage() {
  usePageTitle('Audit log');
  const trackers = useLoad(api.trackers.list, 'trackers');
  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        Audit log
      </h1>
      <section class="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Changes and refusals</h2>
        <p class="hint">
          Every change made through the admin API, the CLI or the config file, every refused attempt and every use of the admin token, newest first; secrets masked.{' '}
          <a href={accessApi.audit.exportUrl} download="tributary-audit.jsonl">
            Export (JSON lines)
          </a>
        </p>
        <AuditLog load={accessApi.audit.list} trackers={trackers.data ?? []} listKey="audit" />
      </section>
    </div>
  );
}
