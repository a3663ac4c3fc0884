import type { Authenticator } from '../core/access/authenticate';
import type { AuditLog } from '../core/access/audit-log';
import type { LoginLimiter } from '../core/access/login-limiter';
import type { SessionLimits, SessionStore } from '../core/access/session-store';
import type { AccessService } from '../operator/access-service';
import type { ConnectorRegistry } from '../../connectors/registry';
import type { RequestHistory } from '../core/requests/request-history';
import type { TrafficReader } from '../core/series/traffic';
import type { LiveFeed } from '../http/live/live-feed';
import type { MemorySnapshot } from '../core/redis/memory-budget';
import type { DeliveryAdmin } from '../operator/delivery-admin';
import type { DestinationService } from '../operator/destination-service';
import type { RulesPreviewer } from '../operator/rules-preview';
import type { SourceService } from '../operator/source-service';
import type { TrackerService } from '../operator/tracker-service';

export interface AccessDeps {
  service: AccessService;
  sessions: SessionStore;
  sessionLimits: SessionLimits;
  limiter: LoginLimiter;
  authenticator: Authenticator;
  audit: AuditLog;
}

/** What the admin API needs: the same services the CLI uses (src/cli/context.ts), and nothing of its own. */
export interface AdminDeps {
  /** People, sessions, tokens and the audit log (docs/access.md). */
  access: AccessDeps;
  /** Base URL of the integration views. */
  publicUrl: string;
  trackers: TrackerService;
  destinations: DestinationService;
  delivery: DeliveryAdmin;
  /** Destination rules run over a tracker's last records, saved or not. */
  preview: RulesPreviewer;
  /** Webhook sources, with their last deliveries. */
  sources: SourceService;
  /** The destination types, whose settings schemas the console draws forms from. */
  connectors: ConnectorRegistry;
  /** The tracker requests the console shows as they arrive. */
  live: LiveFeed;
  /** Redis memory as last sampled: the console's health view shows it. */
  memory: () => MemorySnapshot;
  /** Each tracker's last requests, and those with an unknown token. */
  requests: RequestHistory;
  /** Each tracker's records per minute over the last 24 hours. */
  traffic: TrafficReader;
}
