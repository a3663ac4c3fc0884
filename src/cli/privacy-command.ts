import { InvalidArgumentError, type Command } from 'commander';
import { privacyRuleViews } from '../operator/integration-view';
import { PRIVACY_ACTIONS, type PrivacyAction } from '../core/trackers/privacy-rules';
import type { Tracker } from '../core/trackers/types';
import { withContext } from './context';
import { json, table } from './render';

interface JsonFlag {
  json?: boolean;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

function action(value: string): PrivacyAction {
  if (!(PRIVACY_ACTIONS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${PRIVACY_ACTIONS.join(', ')}.`);
  return value as PrivacyAction;
}

function renderRules(tracker: Tracker): string {
  const rules = privacyRuleViews(tracker);
  if (rules.length === 0) return `Tracker ${tracker.id} has no personal-data rules: every property is stored as sent.\nAdd one: tributary privacy set ${tracker.id} email hash`;
  return [`Personal-data rules of tracker ${tracker.id} (applied before anything is stored)`, table([['PROPERTY', 'ACTION', 'EFFECT'], ...rules.map((r) => [r.property, r.action, r.effect])])].join('\n');
}

const PROPERTY_HELP = 'a top-level property name (email), a JSON pointer into the properties (/address/email, /items/*/email), _uid or _sid (hash), or _ip (drop, hash, truncate-ip)';

export function registerPrivacyCommands(program: Command): void {
  const privacy = program.command('privacy').description('personal-data rules of a tracker: drop, hash, truncate-ip or mask-email a property before it is stored');

  privacy
    .command('list')
    .description("print a tracker's personal-data rules")
    .argument('<tracker>', 'tracker id')
    .option('--show-secret', "also print the tracker's HMAC secret, to compute the same hashes elsewhere (with --json: as `secret`, null before the first hash rule)")
    .option('--json', 'print JSON')
    .action((trackerId: string, opts: JsonFlag & { showSecret?: boolean }) =>
      withContext(async ({ service }) => {
        const tracker = await service.getTracker(trackerId);
        if (opts.json) return print(json({ rules: privacyRuleViews(tracker), ...(opts.showSecret ? { secret: tracker.privacySecret ?? null } : {}) }));
        print(renderRules(tracker));
        if (opts.showSecret) print(tracker.privacySecret ? `\nHMAC secret: ${tracker.privacySecret}` : '\nNo HMAC secret yet: one is made with the first hash rule.');
      }),
    );

  privacy
    .command('set')
    .description('add a rule, or change the action of the rule for that property; applies to new records within the token cache time')
    .argument('<tracker>', 'tracker id')
    .argument('<property>', PROPERTY_HELP)
    .argument('<action>', PRIVACY_ACTIONS.join(', '), action)
    .option('--json', 'print JSON')
    .action((trackerId: string, property: string, act: PrivacyAction, opts: JsonFlag) =>
      withContext(async ({ service }) => {
        const tracker = await service.setPrivacyRule(trackerId, { property, action: act });
        print(opts.json ? json({ rules: privacyRuleViews(tracker) }) : renderRules(tracker));
      }),
    );

  privacy
    .command('remove')
    .description('remove the rule for a property (as it was written)')
    .argument('<tracker>', 'tracker id')
    .argument('<property>', 'the property of the rule')
    .option('--json', 'print JSON')
    .action((trackerId: string, property: string, opts: JsonFlag) =>
      withContext(async ({ service }) => {
        const tracker = await service.removePrivacyRule(trackerId, property);
        print(opts.json ? json({ rules: privacyRuleViews(tracker) }) : renderRules(tracker));
      }),
    );
}
