import { webhookUrl } from '../ingest/webhooks/webhook-url';
import type { WebhookSource } from '../core/trackers/types';

/**
 * A source as its owner sees it: the URL to paste into the sender, and the secret to sign with. The
 * previous secret is left out: it is on its way out, and nobody needs to paste it anywhere.
 */
export type SourceView = Omit<WebhookSource, 'previousSecret'> & { url: string };

export function viewSource(source: WebhookSource, trackerId: string, publicUrl: string): SourceView {
  const { previousSecret: _previous, ...rest } = source;
  return { ...rest, url: webhookUrl(publicUrl, trackerId, source.id) };
}
