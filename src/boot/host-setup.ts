import type { ConnectorRegistry } from '../../connectors/registry';
import { ensureAdminToken } from '../admin/admin-token';
import type { Config } from '../core/config';
import { ensureDemoTracker } from '../operator/demo-tracker';
import type { Logger } from '../core/logger';
import { loadDeclaredTrackers, mergeDeclaredTracker } from '../operator/config-file';
import { DestinationService } from '../operator/destination-service';
import { TrackerService } from '../operator/tracker-service';
import { isUnreadableTracker, type TrackerStore } from '../core/trackers/store';
import { runAudited, type Actor } from '../core/access/audit-context';
import type { AuditLog } from '../core/access/audit-log';

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
export async function prepareTrackers(store: TrackerStore, config: Readonly<Config>, registry: ConnectorRegistry, logger: Logger, audit: AuditLog): Promise<void> {
  if (config.configFile) await syncConfigFile(store, config.configFile, logger, audit);
  const destinations = new DestinationService(store, registry, config.dataDir, logger);
  await ensureDemoTracker(new TrackerService(store), destinations, config.publicUrl, logger, (text) => process.stdout.write(text));
}

/** The trackers of TRIBUTARY_CONFIG into Redis; what the file changed is one audit entry, by the file. */
async function syncConfigFile(store: TrackerStore, file: string, logger: Logger, audit: AuditLog): Promise<void> {
  const actor: Actor = { kind: 'config-file', label: `config file ${file}` };
  const { error, changes } = await runAudited({ actor }, async () => {
    const declared = await loadDeclaredTrackers(file);
    for (const d of declared) {
      let warnings: string[] = [];
      const updated = await store
        .update(d.tracker.id, (stored) => {
          const merged = mergeDeclaredTracker(stored, d);
          warnings = merged.warnings;
          return merged.tracker;
        })
        .catch((err: unknown) => {
          // What Redis holds cannot be merged with the file: left as it is, and the start goes on
          // with the other trackers (docs/operating.md, "Trackers that cannot be read").
          if (!isUnreadableTracker(err)) throw err;
          logger.error({ trackerId: d.tracker.id, file, reason: err.message }, `${err.message}; the config file's declaration of it was not applied`);
          return 'unreadable' as const;
        });
      if (!updated) await store.save(d.tracker);
      for (const warning of warnings) logger.warn({ trackerId: d.tracker.id, file }, warning);
    }
    logger.info({ count: declared.length, file }, 'trackers loaded from config file');
  });
  if (changes.length > 0) {
    const entry = { actor, action: 'config-file sync', target: {}, changes, outcome: error === undefined ? ('ok' as const) : ('failed' as const), ...(error !== undefined ? { reason: (error as Error).message } : {}) };
    await audit.append(entry).catch((err: unknown) => logger.error({ audit: entry, err: (err as Error).message }, 'audit entry not written to Redis; kept in this log line'));
  }
  if (error !== undefined) throw error;
}
