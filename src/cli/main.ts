import { Command } from 'commander';
import { setCommandName } from './context';
import { registerAccessCommands } from './access-commands';
import { describeFailure } from './failure';
import { registerDestinationsCommands } from './destinations-command';
import { registerDlqCommands } from './dlq-command';
import { registerImportCommand } from './import-command';
import { registerPrivacyCommands } from './privacy-command';
import { registerRequestsCommands } from './requests-command';
import { registerSecretsCommands } from './secrets-command';
import { registerSourcesCommands } from './sources-command';
import { registerTrackersCommands } from './trackers-command';
import { registerWarehouseCommands } from './warehouse-command';

function fail(message: string): void {
  process.stderr.write(`tributary: ${message}\n`);
  process.exitCode = 1;
}

const ENVIRONMENT = `
Environment (as for the server, see .env.example):
  REDIS_URL         Redis to use; unset: the embedded redis-server under DATA_DIR (started for the command if not running)
  REDIS_PREFIX      prefix of every Redis key (default: tributary)
  DATA_DIR          where the embedded Redis and the local warehouses live (default: ./data)
  SECRETS_KEY_FILE  the key file that encrypts the secrets kept in Redis, the relay's own (default: DATA_DIR/secrets-key)
  PUBLIC_URL        base URL printed in integration views`;

async function main(argv: string[]): Promise<void> {
  const program = new Command('tributary')
    .description('Tributary: HTTP ingestion relay. Manage trackers and their destinations, dead letters, and the local warehouse.')
    .addHelpText('after', ENVIRONMENT)
    // Commander's own usage errors get the same `tributary: …` shape as ours.
    .configureOutput({ outputError: (text, write) => write(`tributary: ${text.replace(/^error: /, '')}`) });
  // Each command's audit entry names it (src/cli/context.ts), never its arguments.
  program.hook('preAction', (_program, action) => {
    const names: string[] = [];
    for (let c: typeof action | null = action; c && c !== program; c = c.parent) names.unshift(c.name());
    setCommandName(names.join(' '));
  });
  registerTrackersCommands(program);
  registerAccessCommands(program);
  registerDestinationsCommands(program);
  registerSourcesCommands(program);
  registerPrivacyCommands(program);
  registerRequestsCommands(program);
  registerImportCommand(program);
  registerDlqCommands(program);
  registerWarehouseCommands(program);
  registerSecretsCommands(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    fail(describeFailure(err));
  }
}

void main(process.argv);
