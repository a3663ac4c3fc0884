import type { Command } from 'commander';
import type { PersistenceRewrite } from '../core/redis/rewrite-persistence';
import type { ResealReport, SecretsStatus } from '../operator/secrets-service';
import { withContext } from './context';
import { json, table } from './render';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

function renderStatus(s: SecretsStatus): string {
  const rows = s.byKey.map((k) => [k.keyId, String(k.secrets), k.inKeyFile ? (k.current ? 'yes (current)' : 'yes') : 'NO: these do not open']);
  const lines = [`Key file ${s.keyFile}, current key ${s.currentKeyId}`, '', table([['KEY', 'SECRETS', 'IN KEY FILE'], ...rows, ['plain', String(s.plain), s.plain > 0 ? 'not yet encrypted: at the next start, or now with tributary secrets reencrypt' : '']])];
  const old = s.byKey.filter((k) => !k.current && k.secrets > 0);
  if (old.length > 0 || s.plain > 0) lines.push('', `Not under the current key: ${old.reduce((n, k) => n + k.secrets, 0) + s.plain}. Encrypt them under it: tributary secrets reencrypt`);
  const droppable = s.byKey.filter((k) => !k.current && k.inKeyFile && k.secrets === 0);
  for (const k of droppable) lines.push('', `No secret is under ${k.keyId} any more: tributary secrets drop-key ${k.keyId}`);
  return lines.join('\n');
}

function persistenceText(p: PersistenceRewrite[]): string {
  if (p.length === 0) return '';
  const parts = p.map((n) => `${n.node}: append-only file ${n.appendOnlyFile}, snapshot ${n.snapshot}`);
  return `\nRedis was asked to rewrite its files, so that the values replaced leave them (backups taken before keep them): ${parts.join('; ')}`;
}

function renderReseal(r: ResealReport, status: SecretsStatus): string {
  const wrote = r.trackers === 0 ? 'Every secret was already encrypted under the current key.' : `Encrypted the secrets of ${r.trackers} tracker${r.trackers === 1 ? '' : 's'} under key ${status.currentKeyId}${r.keyFiles > 0 ? `, and took in ${r.keyFiles} key file${r.keyFiles === 1 ? '' : 's'} kept under DATA_DIR/keys` : ''}.`;
  const left = r.unreadable.length === 0 ? '' : `\nLeft as stored, because they cannot be read: ${r.unreadable.join(', ')} (docs/operating.md, "Trackers that cannot be read"); their secrets stay under their keys.`;
  return `${wrote}${left}${persistenceText(r.persistence)}\n\n${renderStatus(status)}`;
}

export function registerSecretsCommands(program: Command): void {
  const secrets = program
    .command('secrets')
    .description('the secrets kept in Redis (webhook signing secrets, personal-data HMAC keys, destination passwords and keys), encrypted with the key file (SECRETS_KEY_FILE): status, and key rotation');

  secrets
    .command('status')
    .description('how many stored secrets are encrypted under each key, and how many are still plain')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }) =>
      withContext(async ({ secrets: service }) => {
        const status = await service.status();
        print(opts.json ? json(status) : renderStatus(status));
      }),
    );

  secrets
    .command('reencrypt')
    .description('encrypt every stored secret under the current key (after use-key; plain ones too), through the same compare-and-set as every change')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }) =>
      withContext(async ({ secrets: service }) => {
        const report = await service.reencrypt();
        const status = await service.status();
        print(opts.json ? json({ ...report, status }) : renderReseal(report, status));
      }),
    );

  secrets
    .command('add-key')
    .description('add a new random key to the key file; it opens secrets at once, and encrypts new ones only once current (use-key, or --current)')
    .argument('[id]', 'the key id (default: the date and 4 random hex digits)')
    .option('--current', 'make it the current key at once')
    .action((id: string | undefined, opts: { current?: boolean }) =>
      withContext(async ({ secrets: service }) => {
        const keyId = await service.addKey(id, opts.current === true);
        const next = opts.current ? 'then: tributary secrets reencrypt' : `then: tributary secrets use-key ${keyId}`;
        print(`Added key ${keyId}${opts.current ? ', now the current key' : ''}. Every relay process reads the key file again within a second (or at once on SIGHUP); ${next}`);
      }),
    );

  secrets
    .command('use-key')
    .description('make a key of the key file the current one: new secrets are encrypted under it')
    .argument('<id>', 'the key id')
    .action((keyId: string) =>
      withContext(async ({ secrets: service }) => {
        await service.useKey(keyId);
        print(`Key ${keyId} is the current key. Every relay process reads the key file again within a second (or at once on SIGHUP); then: tributary secrets reencrypt`);
      }),
    );

  secrets
    .command('drop-key')
    .description('remove a key from the key file: refused for the current key, and while a stored secret is still encrypted under it')
    .argument('<id>', 'the key id')
    .action((keyId: string) =>
      withContext(async ({ secrets: service }) => {
        await service.dropKey(keyId);
        print(`Dropped key ${keyId} from the key file. Copies of the key file that still hold it (backups, a secret manager's older versions) should go too.`);
      }),
    );
}
