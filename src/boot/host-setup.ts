import type { ConnectorRegistry } from '../../connectors/registry';
import { ensureAdminToken } from '../admin/admin-token';
import type { Config } from '../core/config';
import { ensureDemoTracker } from '../operator/demo-tracker';
import type { Logger } from '../core/logger';
import { loadDeclaredTrackers, mergeDeclaredTracker } from '../operator/config-file';
import { DestinationService } from '../operator/destination-service';
import { TrackerService } from '../operator/tracker-service';
import type { TrackerStore } from '../core/trackers/store';

/**
 * ADMIN_TOKEN, else the one kept in DATA_DIR, else a new one, printed this once. Once per host:
 * by the one process, or by the cluster primary, which hands the token to its API processes.
 */
export async function resolveAdminToken(config: Readonly<Config>, logger: Logger): Promise<string> {
  const admin = await ensureAdminToken(config.dataDir, config.adminToken);
  if (admin.source === 'generated') {
    logger.info({ file: admin.file }, 'first start: generated the admin token');
    // Printed this once only; afterwards it is read from the file (mode 0600), never logged.
    process.stdout.write(`\nAdmin API token (kept in ${admin.file}; shown only now):\n  ${admin.token}\n`);
  }
  return admin.token;
}

/** Once per host, before the API serves: the trackers of TRIBUTARY_CONFIG into Redis, then the demo tracker on a first start. */
export async function prepareTrackers(store: TrackerStore, config: Readonly<Config>, registry: ConnectorRegistry, logger: Logger): Promise<void> {
  if (config.configFile) {
    const declared = await loadDeclaredTrackers(config.configFile);
    for (const d of declared) {
      let warnings: string[] = [];
      const updated = await store.update(d.tracker.id, (stored) => {
        const merged = mergeDeclaredTracker(stored, d);
        warnings = merged.warnings;
        return merged.tracker;
      });
      if (!updated) await store.save(d.tracker);
      for (const warning of warnings) logger.warn({ trackerId: d.tracker.id, file: config.configFile }, warning);
    }
    logger.info({ count: declared.length, file: config.configFile }, 'trackers loaded from config file');
  }
  const destinations = new DestinationService(store, registry, config.dataDir, logger);
  await ensureDemoTracker(new TrackerService(store), destinations, config.publicUrl, logger, (text) => process.stdout.write(text));
}
