import { Command } from 'commander';
import { ConfigError } from '../config';
import { TrackerServiceError } from '../trackers/service';
import { CliError } from './context';
import { registerTrackersCommands } from './trackers-command';

function fail(message: string): void {
  process.stderr.write(`tributary: ${message}\n`);
  process.exitCode = 1;
}

/** Settings come from the environment, as for the server (see .env.example): REDIS_URL, REDIS_PREFIX, PUBLIC_URL. */
async function main(argv: string[]): Promise<void> {
  const program = new Command('tributary')
    .description('Tributary: HTTP ingestion relay. Settings come from the environment (REDIS_URL, REDIS_PREFIX, PUBLIC_URL).')
    // Commander's own usage errors get the same one-line `tributary: …` shape as ours.
    .configureOutput({ outputError: (text, write) => write(`tributary: ${text.replace(/^error: /, '')}`) });
  registerTrackersCommands(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof TrackerServiceError || err instanceof CliError || err instanceof ConfigError) return fail(err.message);
    fail(`unexpected error: ${err instanceof Error ? err.message : String(err)}`);
  }
}

void main(process.argv);
