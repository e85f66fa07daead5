import type { PostalAddress } from '../kernel/address.js';
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

/**
 * What the views show of a resource, from an entity (resourceFactsOf) or a
 * row of listResources alike, so the list and the single resource
 * cannot drift apart.
 */
export interface ResourceFacts {
  id: string;
  reference: string;
  providerReference: string;
  publicName: string;
  internalName: string;
  description: string | null;
  contactReference: string | null;
  contactProfileReference: string | null;
  archived: boolean;
  productReferences: string[];
  address: PostalAddress | null;
  website: string | null;
  imageUrl: string | null;
  messageHelpText: string | null;
}

/** Needs provider, products, contact and contactProfile loaded (see RESOURCE_VIEW_RELATIONS). */
export const resourceFactsOf = (resource: Resource): ResourceFacts => ({
  id: resource.id,
  reference: resource.reference,
  providerReference: resource.provider.reference,
  publicName: resource.publicName,
  internalName: resource.internalName,
  description: resource.description,
  contactReference: resource.contact?.reference ?? null,
  contactProfileReference: resource.contactProfile?.reference ?? null,
  archived: resource.archived,
  productReferences: resource.products.getItems().map((product) => product.reference),
  address: resource.address,
  website: resource.website,
  imageUrl: resource.imageUrl,
  messageHelpText: resource.messageHelpText,
});

export const resourceViewOf = (resource: ResourceFacts): ResourceView => ({
  reference: resource.reference,
  uuid: resource.id,
  provider: resource.providerReference,
  publicName: resource.publicName,
  internalName: resource.internalName,
  description: resource.description,
  contact: resource.contactReference,
  archived: resource.archived,
  products: [...resource.productReferences].sort(),
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

export const resourceDetailsViewOf = (resource: ResourceFacts): ResourceDetailsView => ({
  ...resourceViewOf(resource),
  contactProfileReference: resource.contactProfileReference,
  website: resource.website,
  imageUrl: resource.imageUrl,
  messageHelpText: resource.messageHelpText,
});

/** Needs provider, products and contact loaded (see RESOURCE_VIEW_RELATIONS). */
export const toResourceView = (resource: Resource): ResourceView => resourceViewOf(resourceFactsOf(resource));

/** Needs contactProfile loaded as well. */
export const toResourceDetailsView = (resource: Resource): ResourceDetailsView => resourceDetailsViewOf(resourceFactsOf(resource));
