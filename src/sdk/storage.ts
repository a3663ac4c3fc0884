/**
 * First-party storage that never throws into the page: `localStorage` can be missing, disabled,
 * full or refused (private modes, sandboxed frames), and then the SDK works from memory alone.
 */
export function readJson<T>(key: string): T | undefined {
  try {
    const text = localStorage.getItem(key);
    return text === null ? undefined : (JSON.parse(text) as T);
  } catch {
    return undefined;
  }
}

/** Writes `value` as JSON, or removes the key when it is undefined. */
export function writeJson(key: string, value: unknown): void {
  try {
    if (value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Full or refused: memory still holds it for this page.
  }
}

/** The keys that start with `prefix`. */
export function keysWith(prefix: string): string[] {
  const keys: string[] = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key !== null && key.startsWith(prefix)) keys.push(key);
    }
  } catch {
    // No storage: no keys.
  }
  return keys;
}

/** A cookie's JSON value, when the site asked for cookies (to share ids across its subdomains). */
export function readCookie<T>(name: string): T | undefined {
  try {
    const found = document.cookie.split('; ').find((c) => c.startsWith(`${name}=`));
    return found === undefined ? undefined : (JSON.parse(decodeURIComponent(found.slice(name.length + 1))) as T);
  } catch {
    return undefined;
  }
}

/** Writes a first-party cookie for a year (or deletes it when `value` is undefined). */
export function writeCookie(name: string, value: unknown, domain: string): void {
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  const age = value === undefined ? 0 : 31_536_000;
  const text = value === undefined ? '' : encodeURIComponent(JSON.stringify(value));
  try {
    document.cookie = `${name}=${text}; Max-Age=${age}; Path=/; Domain=${domain}; SameSite=Lax${secure}`;
  } catch {
    // Cookies refused: storage or memory keep the ids.
  }
}
