import type { Context } from '../kernel/context.js';
import type { ChannelKey } from '../resources/booking-channel-setting.entity.js';
import { validationError } from '../kernel/errors.js';
import { parseChannelKey } from '../resources/booking-channel.service.js';
import { BOOKABLES_REFS_MAX } from './bookables.service.js';
import { resolvePublicResources } from './public-resource.js';

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

/**
 * Resolves what a booking page shows: the path's resource (unknown is
 * NOT_FOUND, like every booking-flow path) and the extra `ref`s (skipped when
 * they name nothing or another CRM; at most as many as the listing takes),
 * and checks the channel key.
 */
export async function bookingPageSubject(ctx: Context, ref: string, extraRefs: readonly string[], channelKey: string | undefined): Promise<BookingPageSubject> {
  const key = parseChannelKey(channelKey);
  if (extraRefs.length > BOOKABLES_REFS_MAX) throw validationError(`ref: at most ${BOOKABLES_REFS_MAX} further resources, got ${extraRefs.length}`);
  const resources = await resolvePublicResources(ctx, ref, extraRefs);
  const provider = resources[0].provider;
  return {
    resources: resources.map((resource) => ({ uuid: resource.id, name: resource.publicName })),
    providerName: provider.name,
    timeZone: provider.timeZone,
    providerLanguage: provider.language,
    channelKey: key,
  };
}
