import { RequestHistory } from './request-history.js';
import { requestsApi } from './requests-api.js';

/** The tracker's last requests, accepted and refused with the reason, kept on the server. */
export function HistoryTab({ trackerId }: { trackerId: string }) {
  return (
    <section class="card" aria-labelledby="history-heading">
      <h2 id="history-heading">Request history</h2>
      <p class="hint">
        The tracker’s last requests (REQUEST_HISTORY_SIZE, 1 000 by default), accepted and refused, newest first, refreshed every few seconds. Tokens and other secrets in URLs read as
        [redacted]; bodies are not kept. Requests whose token matches no tracker are on the <a href="#/requests/unknown-token">Unknown tokens</a> page.
      </p>
      <RequestHistory
        load={(filter) => requestsApi.tracker(trackerId, filter)}
        listKey={`tracker:${trackerId}`}
        label="Request history"
        empty="No request kept yet. Send one from the Integration tab."
      />
    </section>
  );
}
