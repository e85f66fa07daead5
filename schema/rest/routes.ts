import { bookingRoutes } from './booking.routes.js';
import { cancelPageRoutes } from './cancel-page.routes.js';
import type { Route } from './http.js';
import { offeringsRoutes } from './offerings.routes.js';
import { schedulingRoutes } from './scheduling.routes.js';
import { setupRoutes } from './setup.routes.js';
import { webhookRoutes } from './webhooks.routes.js';

/** Every documented REST endpoint, by spec section. */
export const ROUTES: Route[] = [...setupRoutes, ...offeringsRoutes, ...schedulingRoutes, ...bookingRoutes, ...cancelPageRoutes, ...webhookRoutes];
