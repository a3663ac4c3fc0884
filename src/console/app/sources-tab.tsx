import { useCanEdit } from './access.js';
import { api } from './api.js';
import { Alert, Spinner } from './components.js';
import { useLoad } from './hooks.js';
import { href, navigate } from './router.js';
import { keepFreshSecret } from './fresh-secrets.js';
import { SourceForm } from './source-form.js';
import { SOURCE_LABELS } from './source-setup.js';

/** The tracker's webhook sources, and a form to add one; each opens its own page. */
export function SourcesTab({ trackerId }: { trackerId: string }) {
  const editor = useCanEdit(trackerId);
  const list = useLoad(() => api.sources.list(trackerId), trackerId);
  return (
    <>
      <section class="card" aria-labelledby="sources-heading">
        <h2 id="sources-heading">Webhook sources</h2>
        <p class="hint">A SaaS posts its webhooks to a source’s own URL and signs them with the source’s secret; deliveries without a valid signature are refused. The tracker’s token is not needed.</p>
        <Alert message={list.error} />
        {!list.data ? (
          list.loading && <Spinner />
        ) : list.data.length === 0 ? (
          <p class="empty">{editor ? 'No webhook source yet: add one below for GitHub, Stripe, Shopify, Slack, a Standard Webhooks sender or any sender that signs with an HMAC.' : 'No webhook source yet.'}</p>
        ) : (
          <div class="table-wrap">
            <table data-testid="sources-table">
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Sender</th>
                  <th scope="col">URL</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((s) => (
                  <tr key={s.id}>
                    <td>
                      <a href={href({ page: 'tracker', trackerId, tab: 'sources', sourceId: s.id })}>{s.id}</a>
                    </td>
                    <td>{SOURCE_LABELS[s.type]}</td>
                    <td>
                      <code>{s.url}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {editor && (
        <section class="card" aria-labelledby="add-source-heading">
          <h2 id="add-source-heading">Add a webhook source</h2>
          <SourceForm
            trackerId={trackerId}
            onSaved={(s) => {
              keepFreshSecret(trackerId, s.id, s.secret);
              navigate({ page: 'tracker', trackerId, tab: 'sources', sourceId: s.id });
            }}
          />
        </section>
      )}
    </>
  );
}
