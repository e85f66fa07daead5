import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';
import { validationError } from './errors.js';

/**
 * The country of the IANA zones providers use, for reading national phone
 * numbers (`0170 1234567`). The provider has no address or country field, so
 * its time zone is the best hint; a zone not listed here reads as Germany.
 */
const COUNTRY_OF_ZONE: Record<string, CountryCode> = {
  'Europe/Berlin': 'DE',
  'Europe/Busingen': 'DE',
  'Europe/Vienna': 'AT',
  'Europe/Zurich': 'CH',
  'Europe/Vaduz': 'LI',
  'Europe/Luxembourg': 'LU',
  'Europe/Brussels': 'BE',
  'Europe/Amsterdam': 'NL',
  'Europe/Paris': 'FR',
  'Europe/Monaco': 'MC',
  'Europe/London': 'GB',
  'Europe/Dublin': 'IE',
  'Europe/Lisbon': 'PT',
  'Europe/Madrid': 'ES',
  'Europe/Rome': 'IT',
  'Europe/Malta': 'MT',
  'Europe/Copenhagen': 'DK',
  'Europe/Stockholm': 'SE',
  'Europe/Oslo': 'NO',
  'Europe/Helsinki': 'FI',
  'Europe/Warsaw': 'PL',
  'Europe/Prague': 'CZ',
  'Europe/Bratislava': 'SK',
  'Europe/Budapest': 'HU',
  'Europe/Ljubljana': 'SI',
  'Europe/Zagreb': 'HR',
  'Europe/Athens': 'GR',
  'Europe/Bucharest': 'RO',
  'Europe/Sofia': 'BG',
  'Europe/Tallinn': 'EE',
  'Europe/Riga': 'LV',
  'Europe/Vilnius': 'LT',
  'Europe/Istanbul': 'TR',
  'America/New_York': 'US',
  'America/Chicago': 'US',
  'America/Denver': 'US',
  'America/Los_Angeles': 'US',
  'America/Toronto': 'CA',
  'Australia/Sydney': 'AU',
};

export const DEFAULT_PHONE_COUNTRY: CountryCode = 'DE';

/** The default region for national phone numbers of a provider in this time zone (DE when the zone names no known country). */
export const phoneCountryOfZone = (timeZone: string): CountryCode => COUNTRY_OF_ZONE[timeZone] ?? DEFAULT_PHONE_COUNTRY;

/** A phone number as typed; `normalisePhoneNumber` reads it once the default country is known. */
export const phoneNumberText = () => z.string().trim().max(64);

/**
 * `0170 1234567`, `0049 170 1234567` or `+49 (170) 123-4567` as E.164
 * (`+491701234567`), national forms read in `country`. Refuses only what
 * cannot be a phone number (wrong length for its country, letters, too short).
 */
export function normalisePhoneNumber(value: string, country: CountryCode, field: string): string {
  const text = value.trim();
  // Letters would be read as a keypad word (1-800-FLOWERS); no consumer means that.
  const parsed = /[a-z]/i.test(text) ? undefined : parsePhoneNumberFromString(text, country);
  if (!parsed || !parsed.isPossible()) throw validationError(`${field} must be a phone number, e.g. 0170 1234567 or +49 170 1234567, got "${text.slice(0, 64)}"`);
  return parsed.number;
}
