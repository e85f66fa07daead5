/** A postal address as stored on accounts, resources, timeslots and appointments. */
export interface PostalAddress {
  city: string;
  zip: string;
  street: string;
  number: string;
  countryCode: string;
}

/** Timeslots and appointments also accept free text, e.g. a video-meeting location. */
export type Location = PostalAddress | string;
