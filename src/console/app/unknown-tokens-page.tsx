import { usePageTitle } from './page-title.js';
import { RequestHistory } from './request-history.js';
import { requestsApi } from './requests-api.js';

/** The relay's requests whose token matched no tracker: what a misconfigured integration sends. */
export function UnknownTokensPage() {
  usePageTitle('Unknown tokens', 'unknown-token');
  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        Requests with an unknown token
      </h1>
      <section class="card" aria-labelledby="unknown-heading">
        <h2 id="unknown-heading">Unknown or revoked tokens</h2>
        <p class="hint">
          Requests to any tracker URL whose token matched no tracker: mistyped, revoked, or from another installation. Each shows the token’s first characters, to compare with a tracker’s
          tokens. At most UNKNOWN_TOKEN_HISTORY_PER_MINUTE (60 by default) are kept per API process and minute; an entry says how many were skipped before it.
        </p>
        <RequestHistory
          load={(filter) => requestsApi.unknownToken(filter)}
          listKey="unknown-token"
          label="Requests with an unknown token"
          empty="No request with an unknown token. Good."
          showToken
        />
      </section>
    </div>
  );
}
