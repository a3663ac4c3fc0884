/**
 * Ids of records this writer has written, oldest first, up to `max`. A batch that failed in
 * part is sent again whole by the delivery loop; the records it already wrote are answered `ok`
 * without a second request. For events this matters beyond cost: BigQuery's insertId
 * deduplication is best effort and lasts about a minute, while a retried batch may come back
 * after a long outage.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly max: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
  }
}
