import { createHmac } from 'node:crypto';
import type { RedisClient } from '../redis/cluster';
import { SecretsError, type Keyring } from './keyring';
import { LuaScript } from '../redis/lua-script';

/**
 * A key's check value: an HMAC of a fixed text under the key, which tells two keys apart and says
 * nothing of either. Redis keeps one per key id that has sealed something
 * (`<prefix>:secrets:key-checks`), so that a process holding another key file than the relay's
 * (the CLI run with another DATA_DIR, a key file made anew on a lost volume) is refused before it
 * seals a secret that no other process could open.
 */
export function keyCheckValue(key: Buffer): string {
  return createHmac('sha256', key).update('tributary secrets key check v1').digest('hex').slice(0, 32);
}

export function keyChecksKey(prefix: string): string {
  return `${prefix}:secrets:key-checks`;
}

/**
 * ARGV: the current key's id and check value, then every key of the keyring as id, check value.
 * Refuses a keyring whose key of a registered id is another key, or that holds no registered key
 * at all (while some is registered); else registers the current key. One script: two processes
 * with different key files meeting an empty registry cannot both register theirs. It writes only
 * to register a key, and a registration Redis refuses at its memory limit is left for the next
 * check (pcall), so that a change still runs on a full Redis (src/core/redis/out-of-memory.ts).
 */
const CHECK_AND_REGISTER = new LuaScript(`
local registered = redis.call('HGETALL', KEYS[1])
local known = {}
for i = 1, #registered, 2 do known[registered[i]] = registered[i + 1] end
if #registered > 0 then
  local shared = false
  for i = 3, #ARGV, 2 do
    local check = known[ARGV[i]]
    if check then
      if check ~= ARGV[i + 1] then return 'other:' .. ARGV[i] end
      shared = true
    end
  end
  if not shared then
    local ids = {}
    for i = 1, #registered, 2 do ids[#ids + 1] = registered[i] end
    return 'foreign:' .. table.concat(ids, ', ')
  end
end
if not known[ARGV[1]] then redis.pcall('HSETNX', KEYS[1], ARGV[1], ARGV[2]) end
return 'ok'`);

/** Refuses, in one line, a keyring that is not the relay's; registers its current key. */
export async function checkKeyring(redis: RedisClient, prefix: string, keyring: Keyring, source: string): Promise<void> {
  const pairs = [...keyring.keys].flatMap(([id, key]) => [id, keyCheckValue(key)]);
  const answer = String(await CHECK_AND_REGISTER.run(redis, 1, keyChecksKey(prefix), keyring.currentId, keyCheckValue(keyring.keys.get(keyring.currentId)!), ...pairs));
  if (answer.startsWith('other:')) {
    const id = answer.slice('other:'.length);
    throw new SecretsError(`${source} holds a key ${id} that is not the key ${id} this relay's secrets are encrypted with: use the relay's key file (SECRETS_KEY_FILE, or its DATA_DIR)`);
  }
  if (answer.startsWith('foreign:')) {
    throw new SecretsError(`${source} holds none of the keys this relay's secrets are encrypted with (${answer.slice('foreign:'.length)}): use the relay's key file (SECRETS_KEY_FILE, or its DATA_DIR)`);
  }
}

/** Forgets a key dropped from the key file, so that an old copy of the file holding it alone is refused too. */
export async function forgetKeyCheck(redis: RedisClient, prefix: string, keyId: string): Promise<void> {
  await redis.hdel(keyChecksKey(prefix), keyId);
}
