import * as z from 'zod';

/** A service-account key as Google Cloud downloads it; other fields are kept and passed on. */
const ServiceAccountKeySchema = z.looseObject({
  type: z.literal('service_account'),
  client_email: z.email(),
  private_key: z.string().min(1),
  project_id: z.string().optional(),
});

export interface GoogleAuthSettingsOptions {
  /** A key file path shown in the `keyFile` description, e.g. `/etc/tributary/bq-key.json`. */
  keyFileExample: string;
  /** An `endpoint` value shown in its description, with any note on what the client appends to it. */
  endpointExample: string;
}

/**
 * The settings every Google connector authenticates with, to spread into its settings object.
 * Both Google clients pick an inline key first, then the key file, then — unless a custom
 * endpoint is set — Application Default Credentials; pair with {@link checkGoogleAuth}.
 */
export function createGoogleAuthSettings({ keyFileExample, endpointExample }: GoogleAuthSettingsOptions) {
  return {
    /** Path of a service-account key file, read by the process that delivers or tests the destination. */
    keyFile: z
      .string()
      .min(1)
      .optional()
      .meta({ title: 'Key file path' })
      .describe(
        `Path of a service-account key file (JSON) on the disk of the processes that deliver and test the destination, e.g. ${keyFileExample}. Set keyFile or credentials, not both; with neither, Application Default Credentials are used.`,
      ),
    /**
     * A service-account key, inline. Without `keyFile` and `credentials`: Application Default
     * Credentials, or, with a custom `endpoint`, no authorization at all.
     */
    credentials: ServiceAccountKeySchema.optional().meta({ title: 'Service-account key' }).describe(
      'A service-account key pasted inline, as the JSON file Google Cloud downloads. Set keyFile or credentials, not both; with neither, Application Default Credentials are used (with a custom endpoint: no authorization).',
    ),
    /** The API root, for emulators and private endpoints. Default Google's public endpoint. */
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .meta({ title: 'API address (emulators and private endpoints)' })
      .describe(
        `API root URL, only for emulators and private endpoints, e.g. ${endpointExample}. With an endpoint and no credentials, requests carry no authorization. Default: Google's public endpoint.`,
      ),
  };
}

/** The refinement that goes with {@link createGoogleAuthSettings}: one source of credentials at most. */
export function checkGoogleAuth(s: { keyFile?: string | undefined; credentials?: unknown }, ctx: z.RefinementCtx): void {
  if (s.keyFile && s.credentials) ctx.addIssue({ code: 'custom', path: ['credentials'], message: 'set keyFile or credentials, not both' });
}
