import { InvalidArgumentError, type Command } from 'commander';
import { webhookUrl } from '../ingest/webhooks/webhook-url';
import { SOURCE_TYPES, type WebhookSource } from '../core/trackers/types';
import { withContext } from './context';
import { json, table } from './render';

interface JsonFlag {
  json?: boolean;
}

interface AddOptions extends JsonFlag {
  type: string;
  id?: string;
  secret?: string;
  header?: string;
  algorithm?: string;
  encoding?: string;
  signaturePrefix?: string;
  timestampHeader?: string;
  map?: string[];
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** `_event=header:X-Event`, `_id=pointer:/id`, `_uid=pointer:/user/id`, `_event=literal:order.paid`, with an optional `prefix:` before the value. */
export function parseMapRule(text: string): [string, { header?: string; pointer?: string; prefix?: string }] {
  const m = /^(_event|_id|_uid|_sid|_event_at)=(header|pointer|literal):(.*)$/.exec(text);
  if (!m) throw new InvalidArgumentError(`"${text}" is not a rule: write <_event|_id|_uid|_sid|_event_at>=<header|pointer|literal>:<value>, e.g. _event=header:X-Event-Type or _id=pointer:/id`);
  const [, field, from, value] = m as unknown as [string, string, string, string];
  if (from === 'header') return [field, { header: value }];
  if (from === 'pointer') return [field, { pointer: value }];
  return [field, { prefix: value }];
}

/** What a source looks like to its owner: the URL to paste into the sender, and the secret. */
function view(source: WebhookSource, trackerId: string, publicUrl: string) {
  return { ...source, url: webhookUrl(publicUrl, trackerId, source.id) };
}

function renderSource(v: ReturnType<typeof view>): string {
  const lines = [`Source ${v.id} (${v.type})`, `  url:    ${v.url}`, `  secret: ${v.secret}`];
  if (v.previousSecretUntil) lines.push(`  the previous secret is accepted until ${v.previousSecretUntil}`);
  for (const [field, rule] of Object.entries(v.mapping)) {
    if (rule) lines.push(`  ${field} from ${rule.header ? `header ${rule.header}` : rule.pointer !== undefined ? `pointer ${rule.pointer}` : 'a literal'}${rule.prefix ? ` with prefix "${rule.prefix}"` : ''}`);
  }
  return lines.join('\n');
}

export function registerSourcesCommands(program: Command): void {
  const sources = program.command('sources').description('webhook senders of a tracker (GitHub, Stripe, Shopify, Slack, Standard Webhooks, any HMAC): their URL, secret and mapping');

  sources
    .command('add')
    .description('add a webhook source and print its URL and secret')
    .argument('<tracker>', 'tracker id')
    .requiredOption('--type <type>', SOURCE_TYPES.join(', '))
    .option('--id <id>', 'source id, part of its URL (default: the type)')
    .option('--secret <secret>', 'signing secret (generated when the sender takes yours; Stripe, Shopify and Slack issue their own)')
    .option('--header <name>', 'hmac: the header holding the signature')
    .option('--algorithm <alg>', 'hmac: sha1, sha256 or sha512 (default sha256)')
    .option('--encoding <enc>', 'hmac: hex or base64 (default hex)')
    .option('--signature-prefix <text>', 'hmac: text before the signature in the header, e.g. sha256=')
    .option('--timestamp-header <name>', 'hmac: header with the send time in Unix seconds; the signed text is then <timestamp>.<body>')
    .option('--map <rule...>', 'where a reserved field comes from: _event=header:X-Event, _id=pointer:/id, _uid=literal:…')
    .option('--json', 'print JSON')
    .action((trackerId: string, opts: AddOptions) =>
      withContext(async ({ sources, config }) => {
        const hmac = opts.header ? { header: opts.header, algorithm: opts.algorithm, encoding: opts.encoding, signaturePrefix: opts.signaturePrefix, timestampHeader: opts.timestampHeader } : undefined;
        const mapping = opts.map ? Object.fromEntries(opts.map.map(parseMapRule)) : undefined;
        const source = await sources.add(trackerId, { type: opts.type as WebhookSource['type'], id: opts.id, secret: opts.secret, hmac: hmac as never, mapping });
        const v = view(source, trackerId, config.publicUrl);
        print(opts.json ? json(v) : `Added ${renderSource(v)}\nPaste the URL and the secret into the sender's webhook settings.`);
      }),
    );

  sources
    .command('list')
    .description("list a tracker's webhook sources")
    .argument('<tracker>', 'tracker id')
    .option('--json', 'print JSON')
    .action((trackerId: string, opts: JsonFlag) =>
      withContext(async ({ sources, config }) => {
        const list = (await sources.list(trackerId)).map((s) => view(s, trackerId, config.publicUrl));
        if (opts.json) return print(json(list));
        print(list.length === 0 ? `Tracker ${trackerId} has no webhook sources. Add one: tributary sources add ${trackerId} --type github` : table([['ID', 'TYPE', 'URL'], ...list.map((v) => [v.id, v.type, v.url])]));
      }),
    );

  sources
    .command('show')
    .description('print a source: URL, secret, mapping')
    .argument('<tracker>', 'tracker id')
    .argument('<source>', 'source id')
    .option('--json', 'print JSON')
    .action((trackerId: string, sourceId: string, opts: JsonFlag) =>
      withContext(async ({ sources, config }) => {
        const v = view(await sources.get(trackerId, sourceId), trackerId, config.publicUrl);
        print(opts.json ? json(v) : renderSource(v));
      }),
    );

  sources
    .command('rotate-secret')
    .description('a new signing secret; the previous one is accepted for a grace period')
    .argument('<tracker>', 'tracker id')
    .argument('<source>', 'source id')
    .option('--secret <secret>', 'the new secret (required for Stripe, Shopify and Slack, which issue theirs)')
    .option('--grace-hours <hours>', 'how long the previous secret keeps working (default 24)', Number)
    .option('--json', 'print JSON')
    .action((trackerId: string, sourceId: string, opts: JsonFlag & { secret?: string; graceHours?: number }) =>
      withContext(async ({ sources, config }) => {
        const v = view(await sources.rotateSecret(trackerId, sourceId, { secret: opts.secret, graceHours: opts.graceHours }), trackerId, config.publicUrl);
        print(opts.json ? json(v) : `Rotated. ${renderSource(v)}`);
      }),
    );

  sources
    .command('remove')
    .description('remove a source: its URL stops accepting deliveries (404)')
    .argument('<tracker>', 'tracker id')
    .argument('<source>', 'source id')
    .action((trackerId: string, sourceId: string) =>
      withContext(async ({ sources }) => {
        await sources.remove(trackerId, sourceId);
        print(`Removed source ${sourceId} of tracker ${trackerId}.`);
      }),
    );
}
