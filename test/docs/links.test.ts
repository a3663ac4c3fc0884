import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The documentation's links hold: every relative link to a file and every `#anchor` (in the same
 * page or another) of the README, docs/, connectors/README.md and bench/RESULTS.md resolves, with
 * GitHub's heading slugs. remark-validate-links does the checking, offline, through remark-cli
 * (ES modules, hence a child process); a broken link is reported with its file, line and target.
 */
const ROOT = path.join(__dirname, '..', '..');
const FILES = ['README.md', 'docs', 'connectors/README.md', 'bench/RESULTS.md'];

/**
 * remark's report as `file:line:column message`: it names each file on a line of its own
 * (`docs/rules.md: no issues found` when clean) and lists the file's problems under it.
 */
function problems(report: string): string[] {
  const found: string[] = [];
  let file = '';
  for (const line of report.split('\n')) {
    const problem = /^\s*(\d+:\d+)(?:-\d+:\d+)?\s+(?:warning|error)\s+(.*?)(?:\s+\S+\s+remark-validate-links:\S+)?$/.exec(line);
    if (problem) found.push(`${file}:${problem[1]} ${problem[2]}`);
    else if (/^\S/.test(line) && !/^[⚠✖]/.test(line)) file = line.replace(/: no issues found$/, '');
    else if (/^\s*(warning|error)\b/.test(line)) found.push(`${file}: ${line.trim()}`);
  }
  return found;
}

test('every relative link and anchor resolves', () => {
  const cli = path.join(ROOT, 'node_modules', 'remark-cli', 'cli.js');
  const run = spawnSync(process.execPath, [cli, '--no-config', '--no-stdout', '--frail', '--no-color', '--use', 'remark-validate-links=repository:false', ...FILES], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 25_000,
  });
  expect(run.error).toBeUndefined();
  expect(run.stderr).toContain('docs/sending-data.md: no issues found');
  expect(problems(run.stderr)).toEqual([]);
  expect(run.status).toBe(0);
});

test('the README is a front door: short, and it links every page of docs/', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  const pages = readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  expect(pages.length).toBeGreaterThan(10);
  expect(pages.filter((name) => !readme.includes(`](docs/${name}`))).toEqual([]);
});
