import type { Connector } from './types';

/**
 * A connector known by its type before its module is loaded. Loading a connector loads its
 * libraries (DuckDB, googleapis, the BigQuery client: tens to hundreds of milliseconds), which a
 * process that never writes to that destination type should not pay.
 */
export interface LazyConnector {
  readonly type: string;
  load(): Connector;
}

/** The connectors a process can deliver to, by destination type. */
export class ConnectorRegistry {
  private readonly byType = new Map<string, Connector | LazyConnector>();

  constructor(connectors: readonly (Connector | LazyConnector)[]) {
    for (const c of connectors) this.byType.set(c.type, c);
  }

  /** Loads the connector's module on first use. */
  get(type: string): Connector | undefined {
    const entry = this.byType.get(type);
    if (entry === undefined || !('load' in entry)) return entry;
    const connector = entry.load();
    if (connector.type !== type) throw new Error(`the connector registered as "${type}" serves "${connector.type}"`);
    this.byType.set(type, connector);
    return connector;
  }

  /** Every type, without loading any connector. */
  types(): string[] {
    return [...this.byType.keys()].sort();
  }

  /** Loads every connector now, so that a server pays for it at start rather than in a request. */
  loadAll(): this {
    for (const type of this.byType.keys()) this.get(type);
    return this;
  }
}
