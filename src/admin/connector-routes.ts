import * as z from 'zod';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';

/**
 * The destination types this server knows, each with its settings as JSON Schema: the console
 * draws its forms from them, so a connector's new setting needs no console change.
 */
export function registerConnectorRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  routes.get('/connectors', 'signed-in', (ctx) => {
    const body = {
      connectors: deps.connectors.types().map((type) => {
        const connector = deps.connectors.get(type)!;
        // Refinements and transforms have no JSON Schema form; the server checks them on save anyway.
        const settingsSchema = z.toJSONSchema(connector.settingsSchema, { io: 'input', unrepresentable: 'any' });
        return { type, description: connector.description, settingsSchema, ...(connector.setup && { setup: connector.setup }) };
      }),
    };
    // As text: the redaction every admin answer passes would blank the schema of a `credentials` setting.
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(body);
  });
}
