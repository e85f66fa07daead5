import { z } from 'zod';

/** True when the runtime knows the IANA zone name. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const timeZoneInput = () => z.string().trim().refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin');
