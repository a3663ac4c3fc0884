import type { SetupStep } from '../types';

/**
 * The steps in Google Cloud that every Google destination starts with, for someone who has never
 * opened it (docs/connect-google-sheets.md and docs/connect-bigquery.md say the same at length).
 * `api` is the API's service name (`sheets.googleapis.com`), `roles` what the service account
 * needs in the project, if anything.
 */
export function googleCloudSteps(apiName: string, api: string, roles: string | undefined): SetupStep[] {
  return [
    { text: 'Create a Google Cloud project, or choose one you have (the drop-down at the top of the page).', url: 'https://console.cloud.google.com/projectcreate' },
    { text: `Enable the ${apiName} in that project: click Enable.`, url: `https://console.cloud.google.com/apis/library/${api}` },
    {
      text: `Create a service account named tributary${roles ? ` and give it the roles ${roles}` : ' (it needs no role in the project)'}. Then open it, Keys → Add key → Create new key → JSON: your browser downloads the key file, which you give below.`,
      url: 'https://console.cloud.google.com/iam-admin/serviceaccounts',
    },
  ];
}
