import { TZDate } from '@date-fns/tz';
import ical, { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus } from 'ical-generator';
import { tzlib_get_ical_block } from 'timezones-ical-library';
import { isRepeatedLocalTime } from '../kernel/zone-offset.js';
import type { MailAttachment } from './mail-transport.js';

export type InviteMethod = 'REQUEST' | 'CANCEL';

export interface CalendarInvite {
  method: InviteMethod;
  /** Stable per participation, so the CANCEL replaces the event the REQUEST created. */
  uid: string;
  start: Date;
  end: Date;
  /**
   * IANA zone of the provider: DTSTART/DTEND carry it as TZID, with its
   * VTIMEZONE, unless start or end falls in the hour repeated when clocks go
   * back. RFC 5545 reads such a local time as its first occurrence, so both
   * are then written in UTC, which names the instant whichever it is.
   */
  timeZone: string;
  summary: string;
  location: string | null;
  description: string | null;
  organizer: { name: string; email: string };
  attendee: { name: string; email: string };
  language: string;
}

/**
 * SEQUENCE per method: a participation gets one REQUEST (confirmation) and at
 * most one CANCEL after it (no transition leads from CANCELED back to
 * BOOKED), so a fixed, higher number on the CANCEL is enough for calendars
 * to apply it over the REQUEST.
 */
export const INVITE_SEQUENCE: Record<InviteMethod, number> = { REQUEST: 0, CANCEL: 1 };

const vtimezones = new Map<string, string | null>();

/** The VTIMEZONE block of an IANA zone, from timezones-ical-library's tzdata build; built once per zone (at most the ~600 zones of tzdata). */
function vtimezone(zone: string): string | null {
  let block = vtimezones.get(zone);
  if (block === undefined) {
    const built = tzlib_get_ical_block(zone);
    block = Array.isArray(built) && built[0] ? built[0] : null;
    vtimezones.set(zone, block);
  }
  return block;
}

/** An iTIP invitation (METHOD:REQUEST) or cancellation (METHOD:CANCEL) as an .ics attachment. */
export function calendarInvite(invite: CalendarInvite): MailAttachment {
  const calendar = ical({
    prodId: { company: 'booking-service', product: 'mail', language: invite.language.toUpperCase() },
    method: invite.method === 'REQUEST' ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL,
    // name null: DTSTAMP stays UTC (RFC 5545 requires it); the generator still adds the event's VTIMEZONE.
    timezone: { name: null, generator: vtimezone },
  });
  const zoned = !isRepeatedLocalTime(invite.timeZone, invite.start.getTime()) && !isRepeatedLocalTime(invite.timeZone, invite.end.getTime());
  calendar.createEvent({
    id: invite.uid,
    sequence: INVITE_SEQUENCE[invite.method],
    // TZDate makes ical-generator write the wall-clock time of the zone next to TZID; a plain Date without zone is UTC.
    start: zoned ? new TZDate(invite.start.getTime(), invite.timeZone) : invite.start,
    end: zoned ? new TZDate(invite.end.getTime(), invite.timeZone) : invite.end,
    timezone: zoned ? invite.timeZone : null,
    summary: invite.summary,
    location: invite.location,
    description: invite.description,
    status: invite.method === 'REQUEST' ? ICalEventStatus.CONFIRMED : ICalEventStatus.CANCELLED,
    organizer: { name: invite.organizer.name, email: invite.organizer.email },
    attendees: [
      {
        name: invite.attendee.name,
        email: invite.attendee.email,
        role: ICalAttendeeRole.REQ,
        // The consumer booked it, so there is nothing to answer: accepted, no RSVP.
        status: invite.method === 'REQUEST' ? ICalAttendeeStatus.ACCEPTED : undefined,
        rsvp: false,
      },
    ],
  });
  const method = invite.method;
  return {
    filename: method === 'REQUEST' ? 'invite.ics' : 'cancel.ics',
    content: calendar.toString(),
    contentType: `text/calendar; charset=utf-8; method=${method}`,
  };
}
