import { cancelLinkFor, formatAddress } from '../../booking/booking.view.js';
import { formatPattern, formatZoned } from '../../booking/date-pattern.js';
import type { Context } from '../../kernel/context.js';
import type { MailJob } from '../../kernel/jobs.js';
import type { Location } from '../../kernel/address.js';
import { calendarInvite, type InviteMethod } from '../calendar-invite.js';
import { composeMail, type MailLanguage, mailLanguage, type RenderedMail } from './layout.js';
import { sql } from '../../kernel/sql.js';

export interface MailPerson {
  email: string;
  name: string;
  language: MailLanguage;
}

/** The appointment facts a participation mail shows. */
export interface MailAppointment {
  start: Date;
  end: Date;
  address: Location | null;
  description: string | null;
  /** The appointment's own product name, else its product's (see appointmentTitle). */
  productName: string | null;
  product: { name: string } | null;
}

/** Everything a mail about one participation shows, loaded once as plain facts. */
export interface ParticipationMail {
  participation: {
    id: string;
    channelKey: string | null;
    /** The customer as provider mails name it; null when there is none. */
    customer: { userName: string; email: string | null; mobile: string | null } | null;
  };
  appointment: MailAppointment;
  provider: { name: string; timeZone: string };
  resource: { publicName: string; address: Location | null };
  /** The customer; null when there is no address to write to (none given, or erased). */
  consumer: MailPerson | null;
  /** The provider's e-mail, else its owner's. */
  providerContact: MailPerson;
  /** The CRM's or the consumer's message that came with the change. */
  message: string | null;
}

interface ParticipationMailRow {
  id: string;
  channel_key: string | null;
  locale: string | null;
  customer_name: string | null;
  customer_email: string | null;
  customer_mobile: string | null;
  customer_language: string | null;
  customer_erased: boolean | null;
  start: string | Date;
  end: string | Date;
  address: Location | null;
  description: string | null;
  product_name: string | null;
  product: string | null;
  provider_name: string;
  time_zone: string;
  provider_language: string;
  provider_email: string | null;
  owner_email: string | null;
  resource_name: string;
  resource_address: Location | null;
}

/**
 * Loads the participation a mail job names with its appointment, provider,
 * resource and customer in one query of plain rows; null when the
 * participation no longer exists (e.g. its appointment was deleted without
 * notification meanwhile).
 */
export async function loadParticipationMail(ctx: Context, job: MailJob): Promise<ParticipationMail | null> {
  const id = job.params.participationId;
  if (!id) throw new Error(`mail ${job.template} needs params.participationId`);
  const [row] = await sql<ParticipationMailRow>(ctx, `select p.id, p.channel_key, p.locale,
            c.user_name as customer_name, c.email as customer_email, c.mobile as customer_mobile, c.language as customer_language,
            c.erased_at is not null as customer_erased,
            a.start, a."end", a.address, a.description, a.product_name, pr.name as product,
            v.name as provider_name, v.time_zone, v.language as provider_language, v.email as provider_email, o.email as owner_email,
            r.public_name as resource_name, r.address as resource_address
       from participation p
       join appointment a on a.id = p.appointment_id
       join provider v on v.id = a.provider_id
       join app_user o on o.id = v.owner_id
       join resource r on r.id = a.resource_id
       left join product pr on pr.id = a.product_id
       left join customer c on c.id = p.customer_id
      where p.id = ?`,
    [id],
  );
  if (!row) return null;
  const customer = row.customer_name === null ? null : { userName: row.customer_name, email: row.customer_email, mobile: row.customer_mobile };
  // A farewell mail to a customer erased in the same transaction carries its own recipient (see MailJob.recipient).
  const consumer: MailPerson | null = job.recipient
    ? { email: job.recipient.email, name: job.recipient.name, language: mailLanguage(job.recipient.language, row.locale, row.provider_language) }
    : customer?.email && !row.customer_erased
      ? { email: customer.email, name: customer.userName, language: mailLanguage(row.customer_language, row.locale, row.provider_language) }
      : null;
  return {
    participation: { id: row.id, channelKey: row.channel_key, customer },
    appointment: {
      start: new Date(row.start),
      end: new Date(row.end),
      address: row.address,
      description: row.description,
      productName: row.product_name,
      product: row.product === null ? null : { name: row.product },
    },
    provider: { name: row.provider_name, timeZone: row.time_zone },
    resource: { publicName: row.resource_name, address: row.resource_address },
    consumer,
    providerContact: { email: row.provider_email ?? row.owner_email!, name: row.provider_name, language: mailLanguage(row.provider_language) },
    message: job.message?.trim() ? job.message.trim() : null,
  };
}

const WORDS = {
  de: {
    hello: (name: string) => `Guten Tag ${name},`,
    what: 'Termin',
    with: 'Bei',
    when: 'Wann',
    where: 'Wo',
    customer: 'Kunde',
    email: 'E-Mail',
    mobile: 'Mobil',
    regards: 'Viele Grüße',
    service: 'Ihr Buchungsservice',
    cancel: 'Termin absagen',
    withdraw: 'Anfrage zurückziehen',
    datePattern: "EEEE, d. MMMM yyyy, HH:mm",
    timePattern: "HH:mm 'Uhr'",
    dayAndTimePattern: "EEEE, d. MMMM yyyy, HH:mm 'Uhr'",
  },
  en: {
    hello: (name: string) => `Hello ${name},`,
    what: 'Appointment',
    with: 'With',
    when: 'When',
    where: 'Where',
    customer: 'Customer',
    email: 'E-mail',
    mobile: 'Mobile',
    regards: 'Kind regards',
    service: 'Your booking service',
    cancel: 'Cancel the appointment',
    withdraw: 'Withdraw the request',
    datePattern: 'EEEE, d MMMM yyyy, HH:mm',
    timePattern: 'HH:mm',
    dayAndTimePattern: 'EEEE, d MMMM yyyy, HH:mm',
  },
} as const;

export const words = (language: MailLanguage) => WORDS[language];

/** Start and end in the provider's zone, e.g. "Montag, 1. März 2027, 10:00 – 11:00 Uhr (Europe/Berlin)". */
export function formatWhen(appointment: Pick<MailAppointment, 'start' | 'end'>, timeZone: string, language: MailLanguage): string {
  const w = WORDS[language];
  const day = (date: Date) => formatPattern(date, 'yyyy-MM-dd', timeZone);
  const endPattern = day(appointment.start) === day(appointment.end) ? w.timePattern : w.dayAndTimePattern;
  return `${formatZoned(appointment.start, w.datePattern, timeZone, language)} – ${formatZoned(appointment.end, endPattern, timeZone, language)} (${timeZone})`;
}

/** The appointment's name: its own product name, else the product's; null when it has neither. */
export const appointmentTitle = (appointment: Pick<MailAppointment, 'productName' | 'product'>): string | null => appointment.productName ?? appointment.product?.name ?? null;

/** Short description used in subjects: "Agent, 01.03.2027 10:00". */
export function subjectFacts(data: ParticipationMail, language: MailLanguage): string {
  const pattern = language === 'de' ? "dd.MM.yyyy, HH:mm 'Uhr'" : 'd MMM yyyy, HH:mm';
  return `${data.resource.publicName}, ${formatZoned(data.appointment.start, pattern, data.provider.timeZone, language)}`;
}

/** What, with whom, when and where: the rows every participation mail shows. */
export function appointmentDetails(data: ParticipationMail, language: MailLanguage): [string, string | null][] {
  const w = WORDS[language];
  return [
    [w.what, appointmentTitle(data.appointment)],
    [w.with, data.resource.publicName],
    [w.when, formatWhen(data.appointment, data.provider.timeZone, language)],
    [w.where, formatAddress(data.appointment.address ?? data.resource.address)],
  ];
}

/** The signed cancel link, while the appointment has not started (the link would be dead after). */
export function cancelLinkOf(ctx: Context, data: ParticipationMail): string | null {
  if (data.appointment.start.getTime() <= ctx.clock.now().getTime()) return null;
  return cancelLinkFor(ctx, data.participation.id, data.appointment.start);
}

/** The .ics invitation (REQUEST) or cancellation (CANCEL) for the consumer's calendar. */
export function inviteFor(ctx: Context, data: ParticipationMail, consumer: MailPerson, method: InviteMethod) {
  const host = new URL(ctx.config.publicBaseUrl).hostname;
  const title = appointmentTitle(data.appointment);
  return calendarInvite({
    method,
    uid: `participation-${data.participation.id}@${host}`,
    start: data.appointment.start,
    end: data.appointment.end,
    timeZone: data.provider.timeZone,
    summary: title ? `${title} – ${data.resource.publicName}` : data.resource.publicName,
    location: formatAddress(data.appointment.address ?? data.resource.address),
    description: data.appointment.description,
    organizer: { name: data.provider.name, email: data.providerContact.email },
    attendee: { name: consumer.name, email: consumer.email },
    language: consumer.language,
  });
}

export interface ConsumerMailSpec {
  subject: string;
  paragraphs: string[];
  quoteLabel: string;
  /** Which link to offer: cancel a booking, withdraw a request, or none. */
  link?: 'cancel' | 'withdraw' | null;
  invite?: InviteMethod | null;
}

/** A mail to the customer about its participation, in the customer's language. */
export function consumerMail(ctx: Context, data: ParticipationMail, consumer: MailPerson, spec: ConsumerMailSpec): RenderedMail {
  const w = WORDS[consumer.language];
  const url = spec.link ? cancelLinkOf(ctx, data) : null;
  return composeMail({
    to: consumer.email,
    subject: spec.subject,
    greeting: w.hello(consumer.name),
    paragraphs: spec.paragraphs,
    details: appointmentDetails(data, consumer.language),
    quote: data.message ? { label: spec.quoteLabel, text: data.message } : null,
    link: url ? { label: spec.link === 'withdraw' ? w.withdraw : w.cancel, url } : null,
    closing: [w.regards, data.provider.name],
    attachments: spec.invite ? [inviteFor(ctx, data, consumer, spec.invite)] : undefined,
  });
}

/** A mail to the provider about a customer's booking, request or cancellation, in the provider's language. */
export function providerMail(data: ParticipationMail, spec: { subject: string; paragraphs: string[]; quoteLabel: string }): RenderedMail {
  const to = data.providerContact;
  const w = WORDS[to.language];
  const customer = data.participation.customer;
  return composeMail({
    to: to.email,
    subject: spec.subject,
    greeting: w.hello(to.name),
    paragraphs: spec.paragraphs,
    details: [
      [w.customer, customer?.userName],
      [w.email, customer?.email],
      [w.mobile, customer?.mobile],
      ...appointmentDetails(data, to.language),
    ],
    quote: data.message ? { label: spec.quoteLabel, text: data.message } : null,
    closing: [w.regards, w.service],
  });
}

/** Name of the customer for provider mails (erased customers are shown as such). */
export const customerName = (data: ParticipationMail): string => data.participation.customer?.userName ?? '—';
