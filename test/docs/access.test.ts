import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createAdminRouter } from '../../src/admin/router';
import { createLogger } from '../../src/core/logger';

/** docs/access.md's route table is the router's declared permissions, row for row. */
test('the route table of docs/access.md lists every admin route with the permission it declares', () => {
  const page = readFileSync(path.join(__dirname, '..', '..', 'docs', 'access.md'), 'utf8');
  const documented = [...page.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| `([a-z:-]+)` \|$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`).sort();
  const declared = createAdminRouter({ access: {} } as never, createLogger('silent'))
    .routes.declared.map((r) => `${r.method} ${r.path.replace('/admin/api', '')} ${r.permission}`)
    .sort();
  expect(documented).toEqual(declared);
});
