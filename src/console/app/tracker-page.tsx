import { useEffect, useRef } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { roleOn, useSession } from './access.js';
import { api } from './api.js';
import { AuditLog } from './audit-log.js';
import { Alert, NoAccess, Spinner } from './components.js';
import { DestinationPage } from './destination-page.js';
import { DestinationsTab } from './destinations-tab.js';
import { HealthTab } from './health-tab.js';
import { HistoryTab } from './history-tab.js';
import { useLoad } from './hooks.js';
import { IntegrationTab } from './integration-tab.js';
import { LiveTab } from './live-tab.js';
import { usePageTitle } from './page-title.js';
import { href, TABS, type Tab } from './router.js';
import { SettingsTab } from './settings-tab.js';
import { SourcePage } from './source-page.js';
import { SourcesTab } from './sources-tab.js';
import { TrafficTab } from './traffic-tab.js';
import { WarehouseTab } from './warehouse-tab.js';

const TAB_LABELS: Record<Tab, string> = {
  settings: 'Settings',
  integration: 'Integration',
  destinations: 'Destinations',
  sources: 'Sources',
  health: 'Health',
  traffic: 'Traffic',
  live: 'Live',
  history: 'History',
  warehouse: 'Warehouse',
  audit: 'Audit',
};

/** What a viewer sees: no tab that shows records' payloads (Live, History, Warehouse) or the audit log. */
const VIEWER_TABS: readonly Tab[] = ['settings', 'integration', 'destinations', 'sources', 'health', 'traffic'];

export function TrackerPage(props: { trackerId: string; tab: Tab; sourceId?: string | undefined; destinationId?: string | undefined }) {
  const role = roleOn(useSession(), props.trackerId);
  if (!role) {
    return (
      <div class="page">
        <p class="breadcrumb">
          <a href="#/trackers">Trackers</a> <span aria-hidden="true">/</span>
        </p>
        <h1 tabIndex={-1} data-autofocus>
          {props.trackerId}
        </h1>
        <NoAccess title="No access">
          You have no role on tracker <code>{props.trackerId}</code>, or it does not exist. An admin can give you one (People).
        </NoAccess>
      </div>
    );
  }
  return <TrackerScreen {...props} tabs={role === 'editor' ? TABS : VIEWER_TABS} />;
}

function TrackerScreen({ trackerId, tab, sourceId, destinationId, tabs }: { trackerId: string; tab: Tab; sourceId?: string | undefined; destinationId?: string | undefined; tabs: readonly Tab[] }) {
  const tracker = useLoad(() => api.trackers.get(trackerId), trackerId);
  // Another tab may have changed the tracker (a destination added, a token rotated): read it again on each switch.
  const shownTab = useRef(tab);
  useEffect(() => {
    if (shownTab.current === tab) return;
    shownTab.current = tab;
    void tracker.reload();
  }, [tab]);
  const name = tracker.data?.name ?? trackerId;
  const sub = sourceId ?? destinationId;
  usePageTitle(`${sub ? `${sub} · ` : ''}${TAB_LABELS[tab]} · ${name}`, `tracker:${trackerId}`);

  return (
    <div class="page">
      <p class="breadcrumb">
        <a href="#/trackers">Trackers</a> <span aria-hidden="true">/</span>
      </p>
      <h1 tabIndex={-1} data-autofocus>
        {name} {tracker.data && <code class="muted">{tracker.data.id}</code>}
      </h1>
      <nav class="tabs" aria-label="Tracker sections">
        {tabs.map((t) => (
          <a key={t} href={href({ page: 'tracker', trackerId, tab: t })} aria-current={t === tab ? 'page' : undefined}>
            {TAB_LABELS[t]}
          </a>
        ))}
      </nav>
      <Alert message={tracker.error} />
      {!tabs.includes(tab) ? (
        <NoAccess title={`${TAB_LABELS[tab]}: editors only`}>This tab shows the records themselves or the changes made; a viewer of this tracker sees its health, charts, destinations and integration.</NoAccess>
      ) : !tracker.data ? (
        tracker.loading && <Spinner />
      ) : (
        <section class="tab-panel" aria-label={TAB_LABELS[tab]}>
          {tab === 'settings' && <SettingsTab tracker={tracker.data} onChange={tracker.setData} />}
          {tab === 'integration' && <IntegrationTab tracker={tracker.data} />}
          {tab === 'destinations' && (destinationId ? <DestinationPage key={destinationId} trackerId={trackerId} destinationId={destinationId} /> : <DestinationsTab trackerId={trackerId} />)}
          {tab === 'sources' && (sourceId ? <SourcePage key={sourceId} trackerId={trackerId} sourceId={sourceId} /> : <SourcesTab trackerId={trackerId} />)}
          {tab === 'health' && <HealthTab trackerId={trackerId} />}
          {tab === 'traffic' && <TrafficTab trackerId={trackerId} />}
          {tab === 'live' && <LiveTab trackerId={trackerId} />}
          {tab === 'history' && <HistoryTab trackerId={trackerId} />}
          {tab === 'warehouse' && <WarehouseTab tracker={tracker.data} />}
          {tab === 'audit' && (
            <section class="card" aria-labelledby="tracker-audit-heading">
              <h2 id="tracker-audit-heading">Changes and refusals</h2>
              <p class="hint">What was done to this tracker, its destinations, sources and rules, and every attempt refused, newest first; secrets masked.</p>
              <AuditLog load={(q) => accessApi.audit.ofTracker(trackerId, q)} listKey={`audit:${trackerId}`} />
            </section>
          )}
        </section>
      )}
    </div>
  );
}
