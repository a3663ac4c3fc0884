/**
 * The settings analytics.js (analytics-next) fetches from `<cdnURL>/v1/projects/<writeKey>/settings`
 * before it sends anything, and that the Swift and Kotlin SDKs fetch from their `cdnHost`:
 * - `integrations["Segment.io"].apiKey` is the write key analytics-next puts in every event and in
 *   its Basic header: without it events go out with no key at all;
 * - `apiHost` names this relay (`PUBLIC_URL` when set, else the host the settings were asked of),
 *   and the mobile SDKs obey it over their own setting, so it must never name Segment's;
 * - one integration, no remote plugins and no middleware, so the SDK loads nothing more from a CDN;
 * - remote metrics off (`sampleRate: 0`), and pointed here should a client sample anyway.
 */
export function segmentSettings(writeKey: string, baseUrl: string): Record<string, unknown> {
  const url = new URL(baseUrl);
  const apiHost = `${url.host}${url.pathname.replace(/\/+$/, '')}/v1`;
  return {
    integrations: {
      'Segment.io': {
        apiKey: writeKey,
        apiHost,
        protocol: url.protocol.replace(/:$/, ''),
        unbundledIntegrations: [],
        addBundledMetadata: false,
      },
    },
    plan: { track: { __default: { enabled: true, integrations: {} } }, identify: { __default: { enabled: true } }, group: { __default: { enabled: true } } },
    edgeFunction: {},
    analyticsNextEnabled: true,
    middlewareSettings: {},
    enabledMiddleware: {},
    metrics: { sampleRate: 0, host: apiHost },
    legacyVideoPluginsEnabled: false,
    remotePlugins: [],
  };
}
