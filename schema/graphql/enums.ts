import { registerEnumType } from 'type-graphql';
import type { BRANCHES } from '../../services/accounts/account.entity.js';
import type { APPOINTMENT_STATES, CURRENCIES } from '../../services/appointments/appointment.entity.js';
import type { BookableKind as ServiceBookableKind } from '../../services/booking/bookables.service.js';
import type { CONTACT_CHANNEL_TYPES } from '../../services/contact-profiles/contact-channel.entity.js';
import type { LANGUAGES } from '../../services/kernel/validation.js';
import type { MAIL_TEMPLATES } from '../../services/kernel/jobs.js';
import type { MAIL_DELIVERY_STATUSES } from '../../services/mail/mail-delivery.entity.js';
import type { PARTICIPATION_STATES } from '../../services/participations/participation.entity.js';
import type { BOOKING_PROCESSES, CHANNEL_KEYS } from '../../services/resources/booking-channel-setting.entity.js';
import type { TIMESLOT_STATES } from '../../services/timeslots/timeslot.entity.js';
import type { createUser } from '../../services/users/user.service.js';
import { WEBHOOK_EVENT_OF_CHANGE } from '../../services/webhooks/webhook-events.js';
import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryStatus as ServiceWebhookDeliveryStatus } from '../../services/webhooks/webhook.entity.js';

/**
 * The closed sets of the GraphQL schema. Each enum's KEYS are the GraphQL
 * names, its VALUES the strings the services (and REST) use: resolvers pass
 * and receive the internal strings, type-graphql turns them into the names
 * (`'models.Bookable'` ↔ `BOOKABLE`, `'real-estate'` ↔ `REAL_ESTATE`).
 * The assertions at the end keep every enum equal to the services' list.
 */

export enum ParticipationState {
  RESERVED = 'RESERVED',
  REQUESTED = 'REQUESTED',
  BOOKED = 'BOOKED',
  CANCELED = 'CANCELED',
  DELETED = 'DELETED',
}
registerEnumType(ParticipationState, {
  name: 'ParticipationState',
  description: 'State of a participation; changes follow the transition table of updateParticipationState.',
  valuesConfig: {
    RESERVED: { description: 'a place held for a while (booking flow: 3 minutes), not yet booked' },
    REQUESTED: { description: 'booking requested, waiting for the provider’s confirmation; holds a place' },
    BOOKED: { description: 'booked; holds a place' },
    CANCELED: { description: 'cancelled; frees the place' },
    DELETED: { description: 'removed; frees the place' },
  },
});

export enum AppointmentState {
  ACTIVE = 'ACTIVE',
  CANCELLED = 'CANCELLED',
}
registerEnumType(AppointmentState, {
  name: 'AppointmentState',
  description: 'State of an appointment (a deleted appointment is reported as CANCELLED).',
});

export enum BookableKind {
  BOOKABLE = 'models.Bookable',
  LOT_APPOINTMENT = 'models.LotAppointment',
}
registerEnumType(BookableKind, {
  name: 'BookableKind',
  description: 'What a bookable slot is made of (REST kind: models.Bookable, models.LotAppointment).',
  valuesConfig: {
    BOOKABLE: { description: 'a free slot of a timeslot, no appointment yet; reserve it by timeslotUuid (REST models.Bookable)' },
    LOT_APPOINTMENT: { description: 'an existing appointment with places left; reserve it by appointmentUuid (REST models.LotAppointment)' },
  },
});

export enum ChannelKey {
  RESOURCE_PUBLIC = 'RESOURCE_PUBLIC',
  RESOURCE_EXCLUSIVE = 'RESOURCE_EXCLUSIVE',
  RESOURCE_REFERENCE = 'RESOURCE_REFERENCE',
  CALENDAR_PUBLIC = 'CALENDAR_PUBLIC',
}
registerEnumType(ChannelKey, {
  name: 'ChannelKey',
  description: 'A booking channel of a resource; where an argument is optional, RESOURCE_PUBLIC is the default.',
  valuesConfig: {
    RESOURCE_PUBLIC: { description: 'the public booking of the resource (default)' },
    RESOURCE_EXCLUSIVE: { description: 'only the customers listed in acceptedCustomers' },
    RESOURCE_REFERENCE: { description: 'an embedded calendar (the widget’s default)' },
    CALENDAR_PUBLIC: { description: 'the website plug-in with all resources' },
  },
});

export enum BookingProcess {
  IMMEDIATE = 'IMMEDIATE',
  REQUESTED = 'REQUESTED',
}
registerEnumType(BookingProcess, {
  name: 'BookingProcess',
  description: 'How a booking on a channel completes.',
  valuesConfig: {
    IMMEDIATE: { description: 'the participation is BOOKED at once' },
    REQUESTED: { description: 'the participation is REQUESTED until the provider confirms it' },
  },
});

export enum Branch {
  REAL_ESTATE = 'real-estate',
  FACILITIES = 'facilities',
  HANDYMAN = 'handyman',
  SPORTS_AND_LEISURE = 'sports-and-leisure',
  MISC = 'misc',
}
registerEnumType(Branch, {
  name: 'Branch',
  description: 'Branch of an account or provider (REST spelling: real-estate, facilities, handyman, sports-and-leisure, misc).',
});

export enum Currency {
  EUR = 'EUR',
  CHF = 'CHF',
}
registerEnumType(Currency, { name: 'Currency', description: 'Currency of a price (ISO 4217).' });

export enum MailDeliveryStatus {
  PENDING = 'PENDING',
  QUEUED = 'QUEUED',
  SENDING = 'SENDING',
  RETRYING = 'RETRYING',
  SENT = 'SENT',
  FAILED = 'FAILED',
  SKIPPED = 'SKIPPED',
}
registerEnumType(MailDeliveryStatus, {
  name: 'MailDeliveryStatus',
  description: 'Delivery state of one e-mail.',
  valuesConfig: {
    PENDING: { description: 'waiting in the outbox' },
    QUEUED: { description: 'handed to the mail queue' },
    SENDING: { description: 'an attempt is under way' },
    RETRYING: { description: 'an attempt failed, another follows' },
    SENT: { description: 'accepted by the mail server' },
    FAILED: { description: 'given up (see lastError)' },
    SKIPPED: { description: 'nobody to write to (no address, customer erased, participation deleted)' },
  },
});

export enum TimeslotState {
  CREATED = 'CREATED',
  BOOKABLE = 'BOOKABLE',
}
registerEnumType(TimeslotState, {
  name: 'TimeslotState',
  description: 'State of a timeslot.',
  valuesConfig: {
    CREATED: { description: 'created, not offered to consumers' },
    BOOKABLE: { description: 'consumers can book its slots' },
  },
});

export enum ContactChannelType {
  MOBILE = 'mobile',
  PHONE = 'phone',
  EMAIL = 'email',
  VIDEO = 'video',
  MESSENGER = 'messenger',
  LINK = 'link',
  LOCATION = 'location',
}
registerEnumType(ContactChannelType, {
  name: 'ContactChannelType',
  description: 'Kind of a contact channel (REST spelling in lower case: mobile, phone, …); consumers are shown only mobile, phone and email.',
});

export enum Language {
  DE = 'de',
  EN = 'en',
}
registerEnumType(Language, {
  name: 'Language',
  description: 'Language of e-mails and pages (REST: de or en, also accepted as de-DE, en_GB, …).',
});

export enum CreateUserOutcome {
  CREATED = 'created',
  UPDATED = 'updated',
  LINKED = 'linked',
}
registerEnumType(CreateUserOutcome, {
  name: 'CreateUserOutcome',
  description: 'What createUser did.',
  valuesConfig: {
    CREATED: { description: 'a new user was created (REST 201)' },
    UPDATED: { description: 'the reference was known; that user was updated' },
    LINKED: { description: 'an existing user of the e-mail without reference was given the reference' },
  },
});

export enum Weekday {
  MONDAY = '1',
  TUESDAY = '2',
  WEDNESDAY = '3',
  THURSDAY = '4',
  FRIDAY = '5',
  SATURDAY = '6',
  SUNDAY = '7',
}
registerEnumType(Weekday, { name: 'Weekday', description: 'A day of the week (REST series_data.weekdays: "1" Monday to "7" Sunday).' });

/**
 * One vocabulary for appointment changes: the `change` of the
 * appointmentChanged subscription and the event types of webhooks. Values are
 * the webhook spelling (participation.state_changed); AppointmentChange.change
 * is mapped onto it by the live resolver.
 */
export const AppointmentChangeKind = WEBHOOK_EVENT_OF_CHANGE;
registerEnumType(AppointmentChangeKind, {
  name: 'WebhookEventType',
  description:
    'A change of an appointment: the `change` of the appointmentChanged subscription, and the event types of webhooks ' +
    '(REST and webhook bodies spell the type participation.added, participation.state_changed, hold.expired, appointment.cancelled, appointment.deleted).',
  valuesConfig: {
    PARTICIPATION_ADDED: { description: 'a participation was created (REST participation.added)' },
    PARTICIPATION_STATE_CHANGED: { description: 'a participation changed its state (REST participation.state_changed)' },
    HOLD_EXPIRED: { description: 'a booking-flow hold ran out and was removed (REST hold.expired)' },
    APPOINTMENT_CANCELLED: { description: 'the appointment was cancelled (REST appointment.cancelled)' },
    APPOINTMENT_DELETED: { description: 'the appointment was deleted (REST appointment.deleted)' },
  },
});

export const WebhookDeliveryStatus = Object.fromEntries(WEBHOOK_DELIVERY_STATUSES.map((status) => [status, status])) as {
  [S in ServiceWebhookDeliveryStatus]: S;
};
registerEnumType(WebhookDeliveryStatus, {
  name: 'WebhookDeliveryStatus',
  description: 'PENDING (first attempt to come), RETRYING (an attempt failed, another follows), SUCCEEDED (2xx), FAILED (out of attempts)',
});

export enum MailTemplate {
  USER_VERIFICATION = 'user-verification',
  PARTICIPATION_BOOKED = 'participation-booked',
  PARTICIPATION_CANCELED = 'participation-canceled',
  APPOINTMENT_CANCELLED = 'appointment-cancelled',
  BOOKING_CONFIRMATION = 'booking-confirmation',
  BOOKING_REQUEST_RECEIVED = 'booking-request-received',
  PROVIDER_BOOKING_NOTIFICATION = 'provider-booking-notification',
  PROVIDER_BOOKING_REQUEST = 'provider-booking-request',
  PROVIDER_BOOKING_CANCELLED = 'provider-booking-cancelled',
  UNKNOWN = 'unknown',
}
registerEnumType(MailTemplate, {
  name: 'MailTemplate',
  description: 'Which e-mail a delivery is (the REST/stored template name in lower case with dashes)',
  valuesConfig: { UNKNOWN: { description: 'a delivery recorded without a template, or of a template this version no longer sends' } },
});

/** A stored template name as the enum's value: names this version does not know become `unknown`. */
export const mailTemplateOf = (name: string): MailTemplate =>
  (Object.values(MailTemplate) as string[]).includes(name) ? (name as MailTemplate) : MailTemplate.UNKNOWN;

// Every enum holds exactly the strings its service accepts or returns: a change on either side fails the typecheck.
type SameSet<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const inSync: [
  SameSet<`${ParticipationState}`, (typeof PARTICIPATION_STATES)[number]>,
  SameSet<`${AppointmentState}`, (typeof APPOINTMENT_STATES)[number]>,
  SameSet<`${BookableKind}`, ServiceBookableKind>,
  SameSet<`${ChannelKey}`, (typeof CHANNEL_KEYS)[number]>,
  SameSet<`${BookingProcess}`, (typeof BOOKING_PROCESSES)[number]>,
  SameSet<`${Branch}`, (typeof BRANCHES)[number]>,
  SameSet<`${Currency}`, (typeof CURRENCIES)[number]>,
  SameSet<`${MailDeliveryStatus}`, (typeof MAIL_DELIVERY_STATUSES)[number] | 'PENDING'>,
  SameSet<`${TimeslotState}`, (typeof TIMESLOT_STATES)[number]>,
  SameSet<`${ContactChannelType}`, (typeof CONTACT_CHANNEL_TYPES)[number]>,
  SameSet<`${Language}`, (typeof LANGUAGES)[number]>,
  SameSet<`${CreateUserOutcome}`, Awaited<ReturnType<typeof createUser>>['outcome']>,
  SameSet<Exclude<`${MailTemplate}`, 'unknown'>, (typeof MAIL_TEMPLATES)[number]>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true];
void inSync;
