import { z } from 'zod';
import { resolveContact } from '../contact-profiles/contact-assignment.js';
import { postalAddressInput } from '../kernel/address-input.js';
import { type Context, inTransaction, requireCrm } from '../kernel/context.js';
import { DomainError, validationError } from '../kernel/errors.js';
import { optionalText, parseInput, requiredText } from '../kernel/validation.js';
import { getProductsOf } from '../products/product.lookup.js';
import type { Provider } from '../providers/provider.entity.js';
import { getProvider } from '../providers/provider.service.js';
import { Resource } from './resource.entity.js';
import type { ResourceFacts } from './resource.view.js';
import { sql } from '../kernel/sql.js';
import { getResourceOf } from './resource.lookup.js';
import { announceResourceTimeslots } from '../timeslots/timeslot-events.js';

/** Relations every resource answer shows (provider, contact and product references). */
export const RESOURCE_VIEW_RELATIONS = ['provider', 'products', 'contact', 'contactProfile'] as const;

const httpUrl = () =>
  z
    .string()
    .trim()
    .max(2048)
    .refine((value) => {
      try {
        return ['http:', 'https:'].includes(new URL(value).protocol);
      } catch {
        return false;
      }
    }, 'must be a URL starting with http:// or https://');

/** Fields a caller may set; on update each one is optional and only a supplied one changes. */
const resourceFields = {
  publicName: requiredText(),
  internalName: requiredText(),
  description: optionalText(20_000),
  products: z.array(requiredText()).max(1000).nullish(),
  contact: optionalText(),
  contactProfileReference: optionalText(),
  website: httpUrl().nullish(),
  imageUrl: httpUrl().nullish(),
  messageHelpText: optionalText(2000),
  address: postalAddressInput('countryCode', false).nullish(),
};

// `archived` is a field of the spec's Resource: honoured on create (and on create-or-update of a known reference).
export const resourceInput = z.object({ reference: requiredText(), ...resourceFields, archived: z.boolean().nullish() });
export const resourceUpdateInput = z.object({
  reference: requiredText().optional(),
  ...resourceFields,
  publicName: resourceFields.publicName.optional(),
  internalName: resourceFields.internalName.optional(),
  archived: z.boolean().optional(),
});
type ResourceChanges = Partial<z.output<typeof resourceInput>>;

/**
 * Creates a resource, or updates the live one with that reference
 * (`created: false`). With `onDuplicateRaise` an existing reference is a 400
 * instead. On update only the fields the body names change.
 */
export async function saveResource(
  ctx: Context,
  providerReference: string,
  raw: unknown,
  options: { onDuplicateRaise?: boolean } = {},
): Promise<{ resource: Resource; created: boolean }> {
  const crm = requireCrm(ctx);
  const input = parseInput(resourceInput, raw);
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const existing = await tx.em.findOne(Resource, { crm, reference: input.reference, deletedAt: null }, { populate: RESOURCE_VIEW_RELATIONS });
    if (existing && existing.provider.id !== provider.id) {
      throw new DomainError('CONFLICT', `Resource reference ${input.reference} is already used by another provider`);
    }
    if (existing && options.onDuplicateRaise) {
      throw new DomainError('DUPLICATE_REFERENCE', `Resource with reference ${input.reference} already exists`);
    }
    const resource =
      existing ??
      tx.em.create(Resource, {
        crm,
        provider,
        reference: input.reference,
        publicName: input.publicName,
        internalName: input.internalName,
        createdAt: new Date(),
      });
    await applyChanges(tx, provider, resource, input);
    const archived = input.archived ?? undefined;
    const archiving = existing !== null && archived !== undefined && archived !== resource.archived;
    if (archived !== undefined) resource.archived = archived;
    await tx.em.flush();
    // Archiving a known resource closes (un-archiving reopens) its slots for live calendars; a new one has none yet.
    if (archiving) await announceResourceTimeslots(tx, resource);
    return { resource, created: !existing };
  });
}

/** Updates a live resource: only supplied fields change; `archived` hides it from consumers. */
export async function updateResource(ctx: Context, providerReference: string, reference: string, raw: unknown): Promise<Resource> {
  const input = parseInput(resourceUpdateInput, raw);
  if (input.reference !== undefined && input.reference !== reference) {
    throw validationError(`reference cannot be changed (path names ${reference}, body ${input.reference})`);
  }
  return inTransaction(ctx, async (tx) => {
    const provider = await getProvider(tx, providerReference);
    const resource = await getResourceOf(tx, provider, reference);
    await tx.em.populate(resource, RESOURCE_VIEW_RELATIONS);
    await applyChanges(tx, provider, resource, input);
    const archiving = input.archived !== undefined && input.archived !== resource.archived;
    if (input.archived !== undefined) resource.archived = input.archived;
    await tx.em.flush();
    // Archiving closes (and un-archiving reopens) every slot of the resource for live calendars.
    if (archiving) await announceResourceTimeslots(tx, resource);
    return resource;
  });
}

/** The provider's live resources (archived ones included), oldest first. */
export async function listResources(ctx: Context, providerReference: string): Promise<ResourceFacts[]> {
  const provider = await getProvider(ctx, providerReference);
  // One statement of plain rows: the ORM's find with its four relations cost the gateway ~4 ms a request.
  return sql<ResourceFacts>(ctx, `select r.id, r.reference, p.reference as "providerReference", r.public_name as "publicName", r.internal_name as "internalName",
        r.description, u.reference as "contactReference", cp.reference as "contactProfileReference", r.archived,
        array(select pr.reference from resource_product rp join product pr on pr.id = rp.product_id where rp.resource_id = r.id) as "productReferences",
        r.address, r.website, r.image_url as "imageUrl", r.message_help_text as "messageHelpText"
       from resource r join provider p on p.id = r.provider_id
       left join app_user u on u.id = r.contact_id left join contact_profile cp on cp.id = r.contact_profile_id
      where r.crm_id = ? and r.provider_id = ? and r.deleted_at is null
      order by r.created_at, r.reference`,
    [requireCrm(ctx).id, provider.id],
  );
}

/** One live resource of the provider; 404 when unknown, deleted or another CRM's. */
export async function getResource(ctx: Context, providerReference: string, reference: string): Promise<Resource> {
  const provider = await getProvider(ctx, providerReference);
  const resource = await getResourceOf(ctx, provider, reference);
  await ctx.em.populate(resource, RESOURCE_VIEW_RELATIONS);
  return resource;
}

/** Copies the supplied fields onto the resource; contact rules are those of contact-assignment. */
async function applyChanges(tx: Context, provider: Provider, resource: Resource, input: ResourceChanges): Promise<void> {
  if (input.publicName !== undefined) resource.publicName = input.publicName;
  if (input.internalName !== undefined) resource.internalName = input.internalName;
  for (const field of ['description', 'website', 'imageUrl', 'messageHelpText', 'address'] as const) {
    if (input[field] !== undefined) (resource[field] as unknown) = input[field] ?? null;
  }
  if (input.products !== undefined) resource.products.set(await getProductsOf(tx, provider, input.products ?? []));
  if (input.contact !== undefined || input.contactProfileReference !== undefined) {
    // A field the caller leaves out keeps its stored value; the pair is checked as it will be stored.
    const { contact, contactProfile } = await resolveContact(
      tx,
      provider,
      input.contact !== undefined ? input.contact : (resource.contact?.reference ?? null),
      input.contactProfileReference !== undefined ? input.contactProfileReference : (resource.contactProfile?.reference ?? null),
    );
    resource.contact = contact;
    resource.contactProfile = contactProfile;
  }
}
