import type { Context } from '../kernel/context.js';
import { TOPICS } from '../kernel/jobs.js';
import { writeOutbox } from '../outbox/outbox.service.js';
import type { Timeslot } from './timeslot.entity.js';

/**
 * Tells live calendars that a timeslot's slots changed (created, moved,
 * opened, closed or deleted). Slots that already have an appointment are
 * announced by that appointment's own capacity events.
 */
export async function announceTimeslot(ctx: Context, timeslot: Timeslot): Promise<void> {
  writeOutbox(ctx.em, {
    kind: 'event',
    topic: TOPICS.capacityChanged,
    payload: {
      scope: 'timeslot',
      resourceId: timeslot.resource.id,
      timeslotId: timeslot.id,
      appointmentId: null,
      start: timeslot.start.toISOString(),
      end: timeslot.end.toISOString(),
      raster: timeslot.raster,
      capacity: timeslot.defaultCapacity,
      capacityLeft: timeslot.state === 'BOOKABLE' ? timeslot.defaultCapacity : 0,
    },
  });
}
