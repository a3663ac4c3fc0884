/**
 * One direction of dependency (docs/architecture.md): the core at the bottom, jobs and connectors on
 * it, the edges on those, the composition roots on top. `npm run lint:deps` fails on an arrow up.
 */
const EDGES = '^src/(ingest|http|operator|admin|cli|boot|console)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-nothing-above-it',
      comment: 'src/core is the shared vocabulary: it may not import jobs, connectors or any edge.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^(jobs|connectors|bench|test)/|' + EDGES },
    },
    {
      name: 'connectors-stand-on-the-core',
      comment: 'A connector imports the core, connectors/ itself and its own libraries; never jobs or an edge.',
      severity: 'error',
      from: { path: '^connectors/' },
      to: { path: '^(jobs|bench|test)/|' + EDGES },
    },
    {
      name: 'jobs-stand-on-the-core-and-the-connector-interface',
      comment: 'Delivery plumbing knows connectors only by their interface, errors and registry.',
      severity: 'error',
      from: { path: '^jobs/' },
      to: { path: '^(bench|test)/|' + EDGES + '|^connectors/(?!(types|errors|registry)\\.ts$)' },
    },
    {
      name: 'ingest-edge-stays-out-of-operator-and-boot',
      comment: 'The ingest edge imports the core and the producer side of jobs (jobs/routing/ingest-job.ts) only.',
      severity: 'error',
      from: { path: '^src/ingest/' },
      to: { path: '^src/(operator|admin|cli|boot|console|http)/|^connectors/|^jobs/(?!routing/ingest-job\\.ts$)' },
    },
    {
      name: 'shared-http-pieces-stay-below-the-operator-edges',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(operator|admin|cli|boot|console)/|^connectors/|^jobs/' },
    },
    {
      name: 'operator-services-stay-below-their-doors',
      comment: 'The services the admin API and the CLI share do not import either of them, nor an HTTP edge.',
      severity: 'error',
      from: { path: '^src/operator/' },
      to: { path: '^src/(http|admin|cli|boot|console)/' },
    },
    {
      name: 'edges-never-import-composition',
      severity: 'error',
      from: { path: '^src/(admin|cli)/' },
      to: { path: '^src/boot/' },
    },
    {
      name: 'console-is-its-own-program',
      comment: 'The browser app is compiled apart and talks to the server over /admin/api only.',
      severity: 'error',
      from: { path: '^src/console/' },
      to: { path: '^(src/(?!console/)|jobs/|connectors/)' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
