import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Permission } from '../core/access/roles';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
// The router's own handler type: ctx.params typed as the router gives them.
type Handler = Parameters<Router['get']>[1];

export interface DeclaredRoute {
  method: Method;
  /** As matched: with the router's prefix (`/admin/api/trackers/:id`). */
  path: string;
  permission: Permission;
}

/**
 * The admin router's routes, each declared with the permission it needs: `routes.get(path,
 * permission, handler)` registers the route behind a guard of that permission. The table is what
 * the router's authorization asks for the route a request matched: a route registered on the
 * router by another way has no entry, and is refused to everyone (see auth.ts). The authorization
 * matrix test reads {@link declared} and the router's own stack, and fails on any difference.
 */
export class GuardedRoutes {
  private readonly table = new Map<string, Permission>();

  constructor(
    private readonly router: Router,
    private readonly prefix: string,
    private readonly guard: (permission: Permission) => Middleware,
  ) {}

  get(path: string, permission: Permission, handler: Handler): void {
    this.add('GET', path, permission, handler);
  }
  post(path: string, permission: Permission, handler: Handler): void {
    this.add('POST', path, permission, handler);
  }
  patch(path: string, permission: Permission, handler: Handler): void {
    this.add('PATCH', path, permission, handler);
  }
  put(path: string, permission: Permission, handler: Handler): void {
    this.add('PUT', path, permission, handler);
  }
  delete(path: string, permission: Permission, handler: Handler): void {
    this.add('DELETE', path, permission, handler);
  }

  /** The permission declared for a matched route (HEAD is GET's), or undefined. */
  permissionOf(method: string, matchedPath: string): Permission | undefined {
    return this.table.get(`${method === 'HEAD' ? 'GET' : method} ${matchedPath}`);
  }

  get declared(): DeclaredRoute[] {
    return [...this.table].map(([key, permission]) => {
      const [method, path] = key.split(' ') as [Method, string];
      return { method, path, permission };
    });
  }

  private add(method: Method, path: string, permission: Permission, handler: Handler): void {
    const key = `${method} ${this.prefix}${path}`;
    if (this.table.has(key)) throw new Error(`${key} is declared twice`);
    this.table.set(key, permission);
    const guard = this.guard(permission) as Handler;
    const verb = method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    this.router[verb](path, guard, handler);
  }
}
