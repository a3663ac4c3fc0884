import type { DeliveryAdmin } from '../trackers/delivery-admin';
import type { DestinationService } from '../trackers/destinations';
import type { TrackerService } from '../trackers/service';

/** What the admin API needs: the same services the CLI uses (src/cli/context.ts), and nothing of its own. */
export interface AdminDeps {
  /** Compared with `Authorization: Bearer …` on every request. */
  token: string;
  /** Base URL of the integration views. */
  publicUrl: string;
  trackers: TrackerService;
  destinations: DestinationService;
  delivery: DeliveryAdmin;
}
