/**
 * Type-level only (`npm run typecheck`; jest does not run it): the console mirrors the admin API's
 * answers in src/console/app/types.ts because it is compiled apart, for the browser. Each line
 * fails the type check when a server type stops fitting the console's mirror of it.
 */
import type { DeadLetter as ServerDeadLetter } from '../../jobs/delivery/dead-letters';
import type { DestinationStatus as ServerDestinationStatus } from '../../jobs/delivery/destination-status';
import type { QueryResult as ServerQueryResult } from '../../connectors/local';
import type * as Console from '../../src/console/app/types';
import type * as ConsoleAccess from '../../src/console/app/access-types';
import type { PersonView as ServerPersonView } from '../../src/core/access/people-store';
import type { ApiTokenView as ServerApiTokenView } from '../../src/core/access/api-token-store';
import type { AuditEntry as ServerAuditEntry } from '../../src/core/access/audit-log';
import type { Invitation as ServerInvitation } from '../../src/operator/access-service';
import type { LiveEntry as ServerLiveEntry } from '../../src/http/live/live-entry';
import type { TrackedRecord as ServerTrackedRecord } from '../../src/core/records/types';
import type { DestinationView as ServerDestinationView } from '../../src/operator/delivery-admin';
import type { IntegrationView as ServerIntegrationView } from '../../src/operator/integration-view';
import type { SourceDelivery as ServerSourceDelivery } from '../../src/core/trackers/source-deliveries';
import type { Tracker as ServerTracker } from '../../src/core/trackers/types';
import type { SourceView as ServerSourceView } from '../../src/operator/source-view';
import type { MemorySnapshot as ServerMemorySnapshot } from '../../src/core/redis/memory-budget';
import type { TrafficPicture as ServerTrafficPicture } from '../../src/core/series/traffic';
import type { DestinationPicture as ServerDestinationPicture } from '../../jobs/delivery/destination-series';
import type { SetupGuide as ServerSetupGuide } from '../../connectors/types';

type Fits<Server, Mirror> = [Server] extends [Mirror] ? true : false;
type Check<T extends true> = T;

export type WireTypesFit = [
  Check<Fits<ServerTracker, Console.Tracker>>,
  Check<Fits<ServerIntegrationView, Console.IntegrationView>>,
  Check<Fits<ServerDestinationStatus, Console.DestinationStatus>>,
  Check<Fits<ServerDestinationView, Console.DestinationView>>,
  Check<Fits<ServerTrackedRecord, Console.TrackedRecord>>,
  Check<Fits<ServerDeadLetter, Console.DeadLetter>>,
  Check<Fits<ServerLiveEntry, Console.LiveEntry>>,
  Check<Fits<ServerQueryResult, Console.QueryResult>>,
  Check<Fits<ServerSourceView, Console.SourceView>>,
  Check<Fits<ServerSourceDelivery, Console.SourceDelivery>>,
  Check<Fits<ServerMemorySnapshot, Console.MemorySnapshot>>,
  Check<Fits<ServerTrafficPicture, Console.TrafficPicture>>,
  Check<Fits<ServerDestinationPicture, Console.DestinationPicture>>,
  Check<Fits<ServerSetupGuide, Console.SetupGuide>>,
  Check<Fits<ServerPersonView, ConsoleAccess.Person>>,
  Check<Fits<ServerApiTokenView, ConsoleAccess.ApiTokenView>>,
  Check<Fits<ServerAuditEntry, ConsoleAccess.AuditEntry>>,
  Check<Fits<ServerInvitation, ConsoleAccess.Invitation>>,
];
