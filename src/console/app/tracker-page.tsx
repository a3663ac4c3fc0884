import { useEffect, useRef } from 'preact/hooks';
import { api } from './api.js';
import { Alert, Spinner } from './components.js';
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
};

export function TrackerPage({ trackerId, tab, sourceId, destinationId }: { trackerId: string; tab: Tab; sourceId?: string | undefined; destinationId?: string | undefined }) {
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
        {TABS.map((t) => (
          <a key={t} href={href({ page: 'tracker', trackerId, tab: t })} aria-current={t === tab ? 'page' : undefined}>
            {TAB_LABELS[t]}
          </a>
        ))}
      </nav>
      <Alert message={tracker.error} />
      {!tracker.data ? (
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
        </section>
      )}
    </div>
  );
}
