import { cancelByLink, type CancelLinkTarget, inspectCancelLink } from '../../services/booking/cancel-by-link.service.js';
import { formatZoned } from '../../services/booking/date-pattern.js';
import type { Context } from '../../services/kernel/context.js';
import { DomainError } from '../../services/kernel/errors.js';
import { escapeHtml } from '../../services/kernel/html.js';
import type { RestResponse, Route } from './http.js';

const tag = 'Booking flow';

/**
 * The small page behind a cancel link: GET shows the appointment and asks
 * for confirmation (so a mail scanner that follows links cancels nothing),
 * POST cancels. Answers HTML in the consumer's language.
 */
export const cancelPageRoutes: Route[] = [
  {
    method: 'get',
    path: '/cancel/:token',
    auth: 'public',
    doc: {
      tag,
      summary: 'Cancel page: asks to confirm',
      description: 'The link of the confirmation mails. Nothing is cancelled on GET, so link scanners are harmless.',
      responses: { 200: { description: 'the page', html: true }, 403: { description: 'invalid or expired link', html: true } },
    },
    handle: (ctx, req) => page(ctx, () => inspectCancelLink(ctx, req.params.token!), 'ask'),
  },
  {
    method: 'post',
    path: '/cancel/:token',
    auth: 'public',
    doc: {
      tag,
      summary: 'Cancel page: cancels the booking',
      responses: { 200: { description: 'cancelled (or already cancelled)', html: true }, 403: { description: 'invalid or expired link', html: true } },
    },
    handle: (ctx, req) => page(ctx, () => cancelByLink(ctx, req.params.token!), 'done'),
  },
];

const TEXT = {
  de: {
    title: 'Termin absagen',
    ask: 'Möchten Sie diesen Termin absagen?',
    button: 'Termin absagen',
    done: 'Ihr Termin wurde abgesagt.',
    gone: 'Dieser Termin ist bereits abgesagt oder kann nicht mehr abgesagt werden.',
    invalid: 'Dieser Link ist ungültig oder abgelaufen.',
    // A request the provider has not confirmed yet is withdrawn, as the request mail's link says.
    requestTitle: 'Anfrage zurückziehen',
    requestAsk: 'Möchten Sie Ihre Anfrage für diesen Termin zurückziehen?',
  },
  en: {
    title: 'Cancel appointment',
    ask: 'Do you want to cancel this appointment?',
    button: 'Cancel appointment',
    done: 'Your appointment has been cancelled.',
    gone: 'This appointment is already cancelled or can no longer be cancelled.',
    invalid: 'This link is invalid or has expired.',
    requestTitle: 'Withdraw request',
    requestAsk: 'Do you want to withdraw your request for this appointment?',
  },
};

async function page(ctx: Context, load: () => Promise<CancelLinkTarget>, mode: 'ask' | 'done'): Promise<RestResponse> {
  let target: CancelLinkTarget;
  try {
    target = await load();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'LINK_INVALID') return { status: 403, html: layout(TEXT.de.title, `<p>${TEXT.de.invalid}</p><p>${TEXT.en.invalid}</p>`) };
    throw error;
  }
  const { participation, appointment } = target;
  const language = participation.locale === 'en' || participation.customer?.language === 'en' ? 'en' : 'de';
  const text = TEXT[language];
  const when = formatZoned(appointment.start, language === 'en' ? "EEEE, d MMMM yyyy 'at' HH:mm" : "EEEE, d. MMMM yyyy 'um' HH:mm 'Uhr'", appointment.provider.timeZone, language);
  const summary = `<p><strong>${escapeHtml(appointment.resource.publicName)}</strong><br>${escapeHtml(when)}</p>`;
  if (mode === 'done') return { status: 200, html: layout(text.title, `${summary}<p>${participation.state === 'CANCELED' ? text.done : text.gone}</p>`) };
  if (!target.cancellable) return { status: 200, html: layout(text.title, `${summary}<p>${text.gone}</p>`) };
  const request = participation.state === 'REQUESTED';
  const [title, ask] = request ? [text.requestTitle, text.requestAsk] : [text.title, text.ask];
  return { status: 200, html: layout(title, `${summary}<p>${ask}</p><form method="post"><button type="submit">${request ? text.requestTitle : text.button}</button></form>`) };
}

function layout(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.6rem 1.2rem}</style>
</head><body><h1>${title}</h1>${body}</body></html>`;
}
