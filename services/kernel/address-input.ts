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
