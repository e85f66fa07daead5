import { z } from 'zod';
import { requiredText } from './validation.js';

/** ISO 3166-1 alpha-2, upper-cased on input. */
export const countryCode = () =>
  z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
    .transform((value) => value.toUpperCase());

/** A postal address where city, zip, street and number are all required. */
export const postalAddressInput = (countryField: 'countryCode' | 'country', countryRequired: boolean) =>
  z
    .object({
      city: requiredText(),
      zip: requiredText(32),
      street: requiredText(),
      number: requiredText(32),
      [countryField]: countryRequired ? countryCode() : countryCode().nullish(),
    })
    .transform((value) => ({
      city: value.city as string,
      zip: value.zip as string,
      street: value.street as string,
      number: value.number as string,
      countryCode: ((value as Record<string, string | null | undefined>)[countryField] ?? 'DE') as string,
    }));

/**
 * Where an appointment or timeslot takes place: a postal address (`country`
 * on input, `countryCode` accepted too, default DE) or free text such as a
 * video-meeting link.
 */
export const locationInput = () =>
  z.union([
    z.string().trim().min(1).max(1000),
    z
      .object({
        city: requiredText(),
        zip: requiredText(32),
        street: requiredText(),
        number: requiredText(32),
        country: countryCode().nullish(),
        countryCode: countryCode().nullish(),
      })
      .transform((value) => ({
        city: value.city,
        zip: value.zip,
        street: value.street,
        number: value.number,
        countryCode: value.country ?? value.countryCode ?? 'DE',
      })),
  ]);

/** An address as responses show it: `{city, countryCode, street, number, zip}`, free text, or null. */
export function toLocationView(location: unknown): { city: string; countryCode: string; street: string; number: string; zip: string } | string | null {
  if (location === null || location === undefined) return null;
  if (typeof location === 'string') return location;
  const address = location as Record<string, string>;
  return { city: address.city!, countryCode: address.countryCode!, street: address.street!, number: address.number!, zip: address.zip! };
}
