import { useAdminApi } from '../helpers/admin-api';

const admin = useAdminApi();

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: unknown;
  enum?: unknown[];
  [key: string]: unknown;
}

interface ConnectorView {
  type: string;
  description: string;
  settingsSchema: JsonSchema;
}

async function connectors(): Promise<Map<string, ConnectorView>> {
  const res = await admin.get('/connectors');
  expect(res.status).toBe(200);
  return new Map((res.body.connectors as ConnectorView[]).map((c) => [c.type, c]));
}

test('needs the admin token', async () => {
  const res = await admin.api.http.get('/admin/api/connectors');
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('ERR_ADMIN_UNAUTHORIZED');
});

test("lists the registry's types, sorted, each with a description", async () => {
  const res = await admin.get('/connectors');
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body.connectors.map((c: ConnectorView) => c.type)).toEqual(['google-sheets', 'local', 'memory']);
  for (const c of res.body.connectors as ConnectorView[]) {
    // A guided first setup where the type has one (Google's); the others show every setting alike.
    expect(Object.keys(c).sort()).toEqual(c.type === 'google-sheets' ? ['description', 'settingsSchema', 'setup', 'type'] : ['description', 'settingsSchema', 'type']);
    expect(c.description).toEqual(expect.any(String));
    expect(c.description.length).toBeGreaterThan(0);
    expect(c.settingsSchema.type).toBe('object');
  }
});

test('local: every setting optional, unknown keys refused, limits included', async () => {
  const schema = (await connectors()).get('local')!.settingsSchema;
  expect(schema.type).toBe('object');
  expect(schema.additionalProperties).toBe(false);
  expect(schema.required ?? []).toEqual([]);
  expect(Object.keys(schema.properties!).sort()).toEqual(['batchRecords', 'maxColumns', 'path', 'releaseAfterIdleMs']);
  expect(schema.properties!.path).toMatchObject({ type: 'string', minLength: 1 });
  expect(schema.properties!.releaseAfterIdleMs).toMatchObject({ type: 'integer', minimum: 0, maximum: 600_000 });
  expect(schema.properties!.maxColumns).toMatchObject({ type: 'integer', minimum: 0, maximum: 10_000 });
  expect(schema.properties!.batchRecords).toMatchObject({ type: 'integer', minimum: 1, maximum: 50_000 });
});

test('google-sheets: a guided setup with the spreadsheet first, the key, and the steps in Google Cloud with their pages', async () => {
  const res = await admin.get('/connectors');
  const sheets = (res.body.connectors as Array<ConnectorView & { setup: { primary: Array<{ setting: string }>; keySetting: string; afterKey: string; steps: Array<{ text: string; url?: string }> } }>).find((c) => c.type === 'google-sheets')!;
  expect(sheets.setup.primary.map((p) => p.setting)).toEqual(['spreadsheetId']);
  expect(sheets.setup.keySetting).toBe('credentials');
  expect(sheets.setup.afterKey).toContain('{email}');
  expect(sheets.setup.steps.map((s) => s.url)).toEqual(['https://console.cloud.google.com/projectcreate', 'https://console.cloud.google.com/apis/library/sheets.googleapis.com', 'https://console.cloud.google.com/iam-admin/serviceaccounts', undefined]);
});

test('google-sheets: spreadsheet, tabs and rollover are described', async () => {
  const schema = (await connectors()).get('google-sheets')!.settingsSchema;
  expect(schema.type).toBe('object');
  const props = schema.properties!;
  expect(Object.keys(props)).toEqual(expect.arrayContaining(['spreadsheetId', 'createSpreadsheet', 'title', 'keyFile', 'credentials', 'endpoint', 'tabs', 'rollover', 'writeRequestsPerMinute', 'maxCells']));
  // The full address may be pasted (the server keeps its id), so the form checks no pattern.
  expect(props.spreadsheetId).toMatchObject({ type: 'string' });
  expect(props.spreadsheetId!.pattern).toBeUndefined();
  expect(props.spreadsheetId!.description).toMatch(/paste its address as the browser shows it/);
  expect(props.createSpreadsheet).toMatchObject({ type: 'boolean' });
  expect(props.rollover).toMatchObject({ type: 'string', enum: ['monthly', 'none'] });
  expect(props.tabs).toMatchObject({ type: 'object', properties: { users: { type: 'string' }, sessions: { type: 'string' }, events: { type: 'string' } } });
  expect(props.writeRequestsPerMinute).toMatchObject({ type: 'integer', minimum: 1, maximum: 300 });
});

test('google-sheets: the inline service-account key is described as an object schema, not redacted', async () => {
  const credentials = (await connectors()).get('google-sheets')!.settingsSchema.properties!.credentials!;
  expect(credentials).toMatchObject({ type: 'object', required: ['type', 'client_email', 'private_key'] });
  expect(credentials.properties!.private_key).toMatchObject({ type: 'string', minLength: 1 });
  expect(credentials.properties!.type).toMatchObject({ const: 'service_account' });
});

test('memory (the test connector): its one required setting', async () => {
  const schema = (await connectors()).get('memory')!.settingsSchema;
  expect(schema).toMatchObject({ type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] });
});
