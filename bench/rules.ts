/**
 * `npm run bench:rules` — what destination rules cost per record (bench/rules-measure.ts). The
 * measurement runs compiled by tsc, as plain JavaScript: tsx's transform wraps every named
 * closure in a `__name()` call, which costs the code measured here something production never pays.
 */
import { execFileSync } from 'node:child_process';
import { buildChildren, compiledPath } from './child';

buildChildren();
execFileSync(process.execPath, [compiledPath('bench/rules-measure.ts')], { stdio: 'inherit', env: process.env });
