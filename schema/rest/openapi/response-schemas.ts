import { z } from './zod-openapi.js';
import { APPOINTMENT_STATES, CURRENCIES } from '../../../services/appointments/appointment.entity.js';
import { CONTACT_CHANNEL_TYPES } from '../../../services/contact-profiles/contact-channel.entity.js';
import { PARTICIPATION_STATES } from '../../../services/participations/participation.entity.js';
import { BOOKING_PROCESSES, CHANNEL_KEYS } from '../../../services/resources/booking-channel-setting.entity.js';
import { TIMESLOT_STATES } from '../../../services/timeslots/timeslot.entity.js';
import { APPOINTMENT_CHANGES } from '../../../services/live/appointment-events.js';
import { WEBHOOK_DELIVERY_STATUSES } from '../../../services/webhooks/webhook.entity.js';
import { WEBHOOK_EVENT_TYPES } from '../../../services/webhooks/webhook-events.js';

/**
 * The shapes the REST facade answers with, as zod schemas for the OpenAPI
 * document (answers are built by the `to…View` functions; these mirror their
 * interfaces, and test/e2e/openapi.test.ts checks real answers against them).
 */

const nullableText = z.string().nullable();
const utc = z.string().openapi({ description: 'UTC with `Z`', example: '2027-05-04T07:00:00Z' });
const withOffset = z.string().openapi({ description: "ISO 8601 with the provider's offset", example: '2027-05-04T09:00:00+02:00' });

export const apiInfo = z.object({ version: z.literal('1') });

export const errorBody = z
  .object({
    'api-info': apiInfo,
    errors: z.array(z.object({ errorCode: z.string().openapi({ example: 'VALIDATION_FAILED' }), message: z.string().openapi({ example: 'email is required' }) })).min(1),
  })
  .openapi('Error');

/** `{ "api-info": {...}, "<name>": schema }`, the spec's wrapper of single entities. */
export const wrapped = (name: string, schema: z.ZodTypeAny) => z.object({ 'api-info': apiInfo, [name]: schema });

const postalAddress = z.object({ city: z.string(), zip: z.string(), street: z.string(), number: z.string(), countryCode: z.string() });
const location = z.union([postalAddress, z.string()]).nullable().openapi({ description: 'A postal address or free text (e.g. a meeting link)' });

export const userView = z
  .object({
    reference: nullableText,
    email: z.string(),
    username: nullableText,
    firstName: nullableText,
    lastName: nullableText,
    phone: nullableText,
    mobile: nullableText,
  })
  .openapi('User');

export const accountView = z
  .object({
    ownerReference: nullableText,
    branch: z.string(),
    accountReference: z.string(),
    invoiceAddress: postalAddress.nullable(),
    invoiceContactName: nullableText,
    invoiceCompanyName: nullableText,
    invoiceTaxId: nullableText,
    email: nullableText,
  })
  .openapi('Account');

export const providerView = z
  .object({
    uuid: z.string().uuid(),
    reference: z.string(),
    name: z.string(),
    email: nullableText,
    mobile: nullableText,
    phone: nullableText,
    impressum: nullableText,
    branch: nullableText,
    subbranch: nullableText,
  })
  .openapi('Provider');

export const productView = z
  .object({
    uuid: z.string().uuid(),
    reference: z.string(),
    name: z.string(),
    description: nullableText,
    minDuration: z.number().int().nullable(),
    maxDuration: z.number().int().nullable(),
    leadTimeMinutes: z.number().int().nullable(),
    followUpTimeMinutes: z.number().int().nullable(),
  })
  .openapi('Product');

export const resourceView = z
  .object({
    reference: z.string(),
    uuid: z.string().uuid(),
    provider: z.string(),
    publicName: z.string(),
    internalName: z.string(),
    description: nullableText,
    contact: nullableText,
    archived: z.boolean(),
    products: z.array(z.string()),
    address: postalAddress.nullable(),
  })
  .openapi('Resource');

const contactChannel = z.object({ label: nullableText, type: z.enum(CONTACT_CHANNEL_TYPES), value: z.string() });

export const generalContactProfileView = z.object({ name: z.string(), contactChannels: z.array(contactChannel) }).openapi('GeneralContactProfile');

export const contactProfileView = z
  .object({ name: z.string(), contactChannels: z.array(contactChannel), reference: nullableText, userReference: nullableText, providerReference: nullableText })
  .openapi('ContactProfile');

const participationFields = {
  reference: nullableText,
  customerReference: nullableText,
  state: z.enum(PARTICIPATION_STATES),
  name: nullableText,
  email: nullableText,
  mobile: nullableText,
  note: nullableText,
  messages: z.array(z.string()).nullable(),
};

export const participationView = z.object({ ...participationFields, appointmentReference: z.string() }).openapi('Participation');

export const appointmentView = z
  .object({
    uuid: z.string().uuid(),
    reference: z.string(),
    acceptBookings: z.boolean(),
    address: location,
    archived: z.boolean(),
    capacity: z.number().int(),
    contactReference: nullableText,
    description: nullableText,
    start: utc,
    end: utc,
    notes: nullableText,
    participations: z.array(z.object(participationFields)),
    price: z.object({ value: z.number(), currency: z.enum(CURRENCIES) }).nullable(),
    productReference: nullableText,
    productName: nullableText,
    resourceReference: z.string(),
    seriesId: nullableText,
    state: z.enum(APPOINTMENT_STATES),
  })
  .openapi('Appointment');

const timeslotFields = {
  uuid: z.string().uuid(),
  reference: z.string(),
  resourceReference: z.string(),
  start: utc,
  end: utc,
  raster: z.number().int(),
  defaultCapacity: z.number().int(),
  defaultAcceptBookings: z.boolean(),
  address: location,
  state: z.enum(TIMESLOT_STATES),
};

export const timeslotView = z.object(timeslotFields).openapi('Timeslot');
export const timeslotWithAppointmentsView = z.object({ ...timeslotFields, appointments: z.array(appointmentView) }).openapi('TimeslotWithAppointments');

export const customerView = z
  .object({
    customerReference: z.string(),
    email: nullableText,
    note: nullableText,
    userName: z.string(),
    mobile: nullableText,
    language: nullableText,
    providerReference: z.string(),
  })
  .openapi('Customer');

export const channelView = z
  .object({
    channelKey: z.enum(CHANNEL_KEYS),
    visible: z.boolean(),
    bookingProcess: z.enum(BOOKING_PROCESSES),
    products: z.array(z.string()).nullable().openapi({ description: 'product references; null offers every product' }),
    exclusiveProducts: z.array(z.string()),
    acceptedCustomers: z.array(z.string()),
  })
  .openapi('BookingChannel');

const bookable = z
  .object({
    kind: z.enum(['models.Bookable', 'models.LotAppointment']),
    start: withOffset,
    end: withOffset,
    resource_uuid: z.string().uuid(),
    timeslot_uuid: z.string().uuid(),
    appointment_uuid: z.string().uuid().nullable().optional(),
    product_uuid: z.string().uuid().nullable().optional(),
    capacity: z.number().int(),
    capacity_left: z.number().int(),
  })
  .passthrough()
  .openapi('Bookable', { description: 'One bookable slot; further fields as the spec lists them (names, products, contact, formatted times).' });

export const upcomingBookablesView = z
  .object({ public_visible: z.boolean() })
  .catchall(z.array(bookable))
  .openapi('UpcomingBookables', { description: 'One key per group (the formatted day, `groupFormat`), each an array of bookables, plus `public_visible`.' });

export const reserveView = z
  .object({
    'api-info': apiInfo,
    participation: z
      .object({
        uuid: z.string().uuid(),
        appointment_uuid: z.string().uuid(),
        timeslot_uuid: z.string().uuid().nullable(),
        resource_uuid: z.string().uuid(),
        product_uuid: z.string().uuid().nullable(),
        from: withOffset,
        to: withOffset,
        appointment_capacity: z.number().int(),
        appointment_capacity_left: z.number().int(),
        customer_uuid: z.string().openapi({ description: 'send back as `placeholder_id` to complete the booking' }),
        state: z.enum(PARTICIPATION_STATES),
        formatedAddress: nullableText,
        messages: z.array(z.string()),
      })
      .passthrough(),
    appointments: z.array(z.object({ uuid: z.string().uuid(), kind: z.literal('models.LotAppointment'), capacity: z.number().int(), capacity_left: z.number().int() }).passthrough()),
  })
  .openapi('ReserveAppointmentAnswer');

export const createdAppointmentView = wrapped(
  'createdAppointment',
  z
    .object({
      appointment_uuid: z.string().uuid(),
      start: withOffset,
      end: withOffset,
      formattedStart: nullableText,
      formattedEnd: nullableText,
      timeslot_uuid: z.string().uuid().nullable(),
      product_uuid: z.string().uuid().nullable(),
      resource_uuid: z.string().uuid(),
      product_name: nullableText,
      resource_name: z.string(),
      capacity: z.number().int(),
      capacity_left: z.number().int(),
      kind: z.literal('models.LotAppointment'),
      cancelLink: z.string().url(),
    })
    .passthrough(),
).openapi('CreatedAppointmentAnswer');

export const activeProductsView = z
  .object({ products: z.array(z.object({ uuid: z.string().uuid(), name: z.string() }).passthrough()) })
  .openapi('ActiveProducts');

export const publicDataView = z.record(z.unknown()).openapi('PublicData', { description: 'What a booking page shows about the first resource named: names, image, help text, contact.' });

export const healthView = z.object({ ok: z.boolean(), pid: z.number().int() }).passthrough().openapi('Health');

const webhookFields = {
  id: z.string().uuid(),
  url: z.string().url(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  description: nullableText,
  createdAt: utc,
};

export const webhookView = z.object(webhookFields).openapi('Webhook');

export const createdWebhookView = z
  .object({ ...webhookFields, secret: z.string().openapi({ description: 'The signing secret, shown only in this answer', example: 'whsec_…' }) })
  .openapi('CreatedWebhook');

export const webhookDeliveryView = z
  .object({
    id: z.string().uuid().openapi({ description: 'Delivery id: `id` of the body and `X-Booking-Delivery`, the same on every retry' }),
    eventId: z.string(),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.array(z.object({ at: utc, statusCode: z.number().int().nullable(), error: nullableText, durationMs: z.number().int() })),
    nextAttemptAt: utc.nullable(),
    createdAt: utc,
    deliveredAt: utc.nullable(),
    body: z.string().openapi({ description: 'The JSON body exactly as sent and signed' }),
  })
  .openapi('WebhookDelivery');

/** The body the service POSTs to a webhook endpoint (built in services/webhooks/webhook-events.ts). */
export const webhookEventBody = z
  .object({
    id: z.string().uuid().openapi({ description: 'Delivery id, the same on every retry: de-duplicate by it' }),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    eventId: z.string().openapi({ description: 'Shared by the deliveries of one event to several endpoints' }),
    createdAt: utc,
    crmId: z.string(),
    data: z.object({
      change: z.enum(APPOINTMENT_CHANGES),
      providerReference: nullableText,
      appointmentUuid: z.string().uuid(),
      appointmentReference: z.string(),
      appointmentState: z.enum(APPOINTMENT_STATES),
      participationUuid: z.string().uuid().nullable(),
      participationReference: nullableText,
      state: z.enum(PARTICIPATION_STATES).nullable(),
      previousState: z.enum(PARTICIPATION_STATES).nullable(),
      at: utc,
    }),
  })
  .openapi('WebhookEvent');
