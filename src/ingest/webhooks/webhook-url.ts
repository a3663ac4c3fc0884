/** The path a source's sender posts to; the URL names the source, its signature proves the sender. */
export const WEBHOOK_PATH = '/v3/webhooks/:tracker/:source';

/** A source's URL, apart from the route so that the CLI shows it without loading the HTTP edge. */
export function webhookUrl(publicUrl: string, trackerId: string, sourceId: string): string {
  return `${publicUrl}/v3/webhooks/${encodeURIComponent(trackerId)}/${encodeURIComponent(sourceId)}`;
}
