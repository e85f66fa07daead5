import type { Route } from './http.js';
import { setupRoutes } from './setup.routes.js';

/** Every documented REST endpoint, by spec section. */
export const ROUTES: Route[] = [...setupRoutes];
