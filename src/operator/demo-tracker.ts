import type { Logger } from '../core/logger';
import type { DestinationService } from './destination-service';
import { buildIntegrationView, renderIntegrationViewText } from './integration-view';
import type { TrackerService } from './tracker-service';

/**
 * On a first start (no tracker at all) a demo tracker with a `local` destination is created and
 * its integration view printed, so that `npm ci && npm start` is the whole setup.
 */
export async function ensureDemoTracker(trackers: TrackerService, destinations: DestinationService, publicUrl: string, logger: Logger, print: (text: string) => void): Promise<void> {
  const stored = await trackers.listTrackers();
  if (stored.trackers.length + stored.unreadable.length > 0) return;
  const { tracker, token } = await trackers.createTracker({ name: 'Demo', id: 'demo' });
  await destinations.add(tracker.id, { type: 'local' });
  logger.info({ trackerId: tracker.id }, 'first start: created the demo tracker with a local destination');
  print(`\nFirst start: created tracker "demo" delivering to the local warehouse.\n\n${renderIntegrationViewText(buildIntegrationView(tracker, token, publicUrl))}\n`);
}
