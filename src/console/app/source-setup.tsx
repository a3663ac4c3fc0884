import type { ComponentChildren } from 'preact';
import type { SourceType, SourceView } from './types.js';

export const SOURCE_LABELS: Record<SourceType, string> = {
  github: 'GitHub',
  stripe: 'Stripe',
  shopify: 'Shopify',
  slack: 'Slack',
  'standard-webhooks': 'Standard Webhooks (Svix…)',
  hmac: 'Any other HMAC sender',
};

/** Stripe, Shopify and Slack make the signing secret; the others take the one generated here. */
export const ISSUES_OWN_SECRET: Record<SourceType, string | null> = {
  github: null,
  stripe: 'Stripe makes the signing secret: add the endpoint in Stripe first, then paste its whsec_… secret here.',
  shopify: 'Shopify signs with the key shown under Settings → Notifications → Webhooks (or your app’s client secret): paste it here.',
  slack: 'Slack signs with your app’s Signing Secret (Basic Information → App Credentials): paste it here.',
  'standard-webhooks': null,
  hmac: null,
};

/** Where the owner pastes the URL and the secret, per provider; what they should see below afterwards. */
export function SetupSteps({ source }: { source: SourceView }) {
  const steps: Record<SourceType, ComponentChildren[]> = {
    github: [
      <>In the repository or organization: <strong>Settings → Webhooks → Add webhook</strong>.</>,
      <><strong>Payload URL</strong>: the URL above; <strong>Content type</strong>: <code>application/json</code>; <strong>Secret</strong>: the secret above.</>,
      <>Choose the events, then <strong>Add webhook</strong>. GitHub sends a ping at once: it shows below as <code>github.ping</code>.</>,
    ],
    stripe: [
      <>In the Dashboard: <strong>Developers → Webhooks → Add endpoint</strong> (in Workbench: <strong>Webhooks → Create an event destination</strong>).</>,
      <><strong>Endpoint URL</strong>: the URL above; select the events to send.</>,
      <>Reveal the endpoint’s <strong>Signing secret</strong> (<code>whsec_…</code>). If it differs from the secret above, <strong>Rotate secret</strong> below with it.</>,
      <>Send a test event from the endpoint page: it shows below as <code>stripe.&lt;type&gt;</code>.</>,
    ],
    shopify: [
      <>In the admin: <strong>Settings → Notifications → Webhooks → Create webhook</strong> (or your app’s webhook subscriptions); format <strong>JSON</strong>.</>,
      <><strong>URL</strong>: the URL above.</>,
      <>Shopify signs with the key shown under the webhook list (or your app’s client secret). If it differs from the secret above, <strong>Rotate secret</strong> below with it.</>,
      <><strong>Send test notification</strong>: it shows below as <code>shopify.&lt;topic&gt;</code>.</>,
    ],
    slack: [
      <>At <strong>api.slack.com/apps</strong> → your app → <strong>Event Subscriptions</strong> (or <strong>Slash Commands</strong>, <strong>Interactivity &amp; Shortcuts</strong>).</>,
      <><strong>Request URL</strong>: the URL above. Slack checks it with a challenge at once: it shows below as <em>challenge</em>.</>,
      <>The secret is the app’s <strong>Signing Secret</strong> (Basic Information → App Credentials); if it differs from the secret above, <strong>Rotate secret</strong> below with it.</>,
    ],
    'standard-webhooks': [
      <>In the sender’s endpoint settings (Svix: <strong>Endpoints → Add Endpoint</strong>): <strong>Endpoint URL</strong>: the URL above.</>,
      <>Signing secret: the <code>whsec_…</code> secret above; when the sender makes its own, <strong>Rotate secret</strong> below with it.</>,
      <>Send a test message: it shows below under its <code>type</code>.</>,
    ],
    hmac: [
      <>Give the sender the URL and the secret above.</>,
      <>
        It signs the raw body{source.hmac?.timestampHeader ? <> (as <code>&lt;timestamp&gt;.&lt;body&gt;</code>, the Unix time in <code>{source.hmac.timestampHeader}</code>)</> : null} with HMAC-{source.hmac?.algorithm.toUpperCase() ?? 'SHA256'} and sends it in <code>{source.hmac?.header ?? 'its signature header'}</code> as {source.hmac?.encoding ?? 'hex'}
        {source.hmac?.signaturePrefix ? <>, after <code>{source.hmac.signaturePrefix}</code></> : null}.
      </>,
      <>Map <code>_event</code> and <code>_id</code> from its headers or body below, so events are typed and redeliveries stored once.</>,
    ],
  };
  return (
    <ol class="setup-steps">
      {steps[source.type].map((step, i) => (
        <li key={i}>{step}</li>
      ))}
    </ol>
  );
}
