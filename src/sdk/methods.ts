/**
 * The browser SDK's methods. The loader stub the relay hands out (src/operator/integration-view.ts)
 * queues calls to exactly these before the script has loaded, and the SDK replays them: one list,
 * so that a method added here is queued there too.
 */
export const SDK_METHODS = ['init', 'track', 'identify', 'page', 'reset', 'flush', 'optOut', 'optIn'] as const;
