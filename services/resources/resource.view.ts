import type { Resource } from './resource.entity.js';

/** The resource as the REST facade shows it (spec "Resource"); absent optional values are null. */
export interface ResourceView {
  reference: string;
  uuid: string;
  provider: string;
  publicName: string;
  internalName: string;
  description: string | null;
  contact: string | null;
  archived: boolean;
  products: string[];
  address: { city: string; zip: string; street: string; number: string; countryCode: string } | null;
}

/** Fields GraphQL shows beyond the REST shape, so a client can read back everything it may set. */
export interface ResourceDetailsView extends ResourceView {
  contactProfileReference: string | null;
  website: string | null;
  imageUrl: string | null;
  messageHelpText: string | null;
}

/** Needs provider, products and contact loaded (see RESOURCE_VIEW_RELATIONS). */
export const toResourceView = (resource: Resource): ResourceView => ({
  reference: resource.reference,
  uuid: resource.id,
  provider: resource.provider.reference,
  publicName: resource.publicName,
  internalName: resource.internalName,
  description: resource.description,
  contact: resource.contact?.reference ?? null,
  archived: resource.archived,
  products: resource.products
    .getItems()
    .map((product) => product.reference)
    .sort(),
  address: resource.address
    ? {
        city: resource.address.city,
        zip: resource.address.zip,
        street: resource.address.street,
        number: resource.address.number,
        countryCode: resource.address.countryCode,
      }
    : null,
});

/** Needs contactProfile loaded as well. */
export const toResourceDetailsView = (resource: Resource): ResourceDetailsView => ({
  ...toResourceView(resource),
  contactProfileReference: resource.contactProfile?.reference ?? null,
  website: resource.website,
  imageUrl: resource.imageUrl,
  messageHelpText: resource.messageHelpText,
});
