import type { RedisClient } from '../redis/cluster';
import { noteChange } from './audit-context';
import { accessKeys } from './keys';

/**
 * The admin token (ADMIN_TOKEN or DATA_DIR/admin-token) is the break-glass credential once people
 * exist: it still opens everything, every use is audited, and an admin can switch it off. Switched
 * off, it is refused everywhere; only the CLI (which needs Redis itself) switches it on again.
 */
export class BreakGlass {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = accessKeys(prefix).breakGlass;
  }

  async enabled(): Promise<boolean> {
    return (await this.redis.get(this.key)) !== 'off';
  }

  async set(enabled: boolean): Promise<void> {
    const before = await this.enabled();
    if (enabled) await this.redis.del(this.key);
    else await this.redis.set(this.key, 'off');
    noteChange('setting break-glass', { enabled: before }, { enabled });
  }
}
