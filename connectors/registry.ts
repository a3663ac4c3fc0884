import type { Connector } from './types';

/** The connectors a process can deliver to, by destination type. */
export class ConnectorRegistry {
  private readonly byType = new Map<string, Connector>();

  constructor(connectors: readonly Connector[]) {
    for (const c of connectors) this.byType.set(c.type, c);
  }

  get(type: string): Connector | undefined {
    return this.byType.get(type);
  }

  types(): string[] {
    return [...this.byType.keys()].sort();
  }
}
