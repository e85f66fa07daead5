import type { Context } from '../kernel/context.js';
import type { ChannelKey } from '../resources/booking-channel-setting.entity.js';
import { validationError } from '../kernel/errors.js';
import { parseChannelKey } from '../resources/booking-channel.service.js';
import { BOOKABLES_REFS_MAX } from './bookables.service.js';
import { type ResolvedRow, resolveResourceRows } from './bookables-query.js';

/** What the booking page needs to know before the browser talks to the public API. */
export interface BookingPageSubject {
  /** The resources the page lists, the path's first (UUIDs, so the browser never sends an ambiguous short reference). */
  resources: { uuid: string; name: string }[];
  providerName: string;
  /** IANA zone of the provider: every time on the page is shown in it, whatever the browser's zone. */
  timeZone: string;
  /** The provider's language (`de`/`en`), the page's last resort after `lang` and Accept-Language. */
  providerLanguage: string;
  channelKey: ChannelKey;
}

interface PageResourceRow extends ResolvedRow {
  public_name: string;
  provider_name: string;
  provider_language: string;
}

/**
 * Resolves what a booking page shows: the path's resource (unknown is
 * NOT_FOUND, like every booking-flow path) and the extra `ref`s (skipped when
 * they name nothing or another CRM; at most as many as the listing takes),
 * and checks the channel key.
 */
export async function bookingPageSubject(ctx: Context, ref: string, extraRefs: readonly string[], channelKey: string | undefined): Promise<BookingPageSubject> {
  const key = parseChannelKey(channelKey);
  if (extraRefs.length > BOOKABLES_REFS_MAX) throw validationError(`ref: at most ${BOOKABLES_REFS_MAX} further resources, got ${extraRefs.length}`);
  // Plain rows in one query: the page is asked for on every visit.
  const resources = await resolveResourceRows<PageResourceRow>(ctx, ref, extraRefs, ', r.public_name, p.name as provider_name, p.language as provider_language');
  const main = resources[0]!;
  return {
    resources: resources.map((resource) => ({ uuid: resource.id, name: resource.public_name })),
    providerName: main.provider_name,
    timeZone: main.time_zone,
    providerLanguage: main.provider_language,
    channelKey: key,
  };
}
