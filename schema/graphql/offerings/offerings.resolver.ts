import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import {
  getContactProfile,
  getGeneralContactProfile,
  saveContactProfile,
  saveGeneralContactProfile,
  toContactProfileView,
} from '../../../services/contact-profiles/contact-profile.service.js';
import type { Context } from '../../../services/kernel/context.js';
import { listProducts, saveProduct, toProductView } from '../../../services/products/product.service.js';
import { deleteResource } from '../../../services/resources/resource-deletion.service.js';
import { getResource, listResources, saveResource, updateResource } from '../../../services/resources/resource.service.js';
import { resourceDetailsViewOf, toResourceDetailsView } from '../../../services/resources/resource.view.js';
import { unlessNotFound } from '../../../services/kernel/errors.js';
import { lookupDescription } from '../not-found.js';
import { plain } from '../plain.js';
import {
  ContactProfileInput,
  ContactProfileType,
  CreateProductPayload,
  GeneralContactProfileInput,
  ProductInput,
  ProductType,
  ResourceInput,
  ResourceType,
  ResourceUpdateInput,
  SaveContactProfilePayload,
  SaveResourcePayload,
} from './offerings.types.js';

/** Products, resources and contact profiles; every operation needs the CRM key. */
@Resolver()
export class OfferingsResolver {
  @Query(() => [ProductType], { description: "The provider's products." })
  async products(@Ctx() ctx: Context, @Arg('providerReference', () => String) providerReference: string): Promise<ProductType[]> {
    return (await listProducts(ctx, providerReference)).map(toProductView);
  }

  @Mutation(() => CreateProductPayload, { nullable: true, description: 'Creates a product, or updates the one with the same reference.' })
  async createProduct(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => ProductInput) input: ProductInput,
  ): Promise<CreateProductPayload> {
    const { product, created } = await saveProduct(ctx, providerReference, plain(input));
    return { product: toProductView(product), created };
  }

  @Query(() => [ResourceType], { description: "The provider's live resources (archived ones included)." })
  async resources(@Ctx() ctx: Context, @Arg('providerReference', () => String) providerReference: string): Promise<ResourceType[]> {
    return (await listResources(ctx, providerReference)).map(resourceDetailsViewOf);
  }

  @Query(() => ResourceType, { nullable: true, description: lookupDescription('A live (not deleted) resource of the provider', 'the resource or the provider is unknown') })
  async resource(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
  ): Promise<ResourceType | null> {
    const resource = await unlessNotFound(getResource(ctx, providerReference, reference));
    return resource && toResourceDetailsView(resource);
  }

  @Mutation(() => SaveResourcePayload, { nullable: true, description: 'Creates a resource, or updates it (onDuplicateRaise: fails with a 400 code instead).' })
  async saveResource(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => ResourceInput) input: ResourceInput,
    @Arg('onDuplicateRaise', () => Boolean, { defaultValue: false }) onDuplicateRaise: boolean,
  ): Promise<SaveResourcePayload> {
    const { resource, created } = await saveResource(ctx, providerReference, plain(input), { onDuplicateRaise });
    return { resource: toResourceDetailsView(resource), created };
  }

  @Mutation(() => ResourceType, { nullable: true, description: 'Changes only the fields given.' })
  async updateResource(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
    @Arg('input', () => ResourceUpdateInput) input: ResourceUpdateInput,
  ): Promise<ResourceType> {
    return toResourceDetailsView(await updateResource(ctx, providerReference, reference, plain(input)));
  }

  @Mutation(() => Boolean, { nullable: true, description: 'Deletes a resource; with ignoreFutureAppointments its future appointments are cancelled.' })
  async deleteResource(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
    @Arg('ignoreFutureAppointments', () => Boolean, { defaultValue: false }) ignoreFutureAppointments: boolean,
  ): Promise<boolean> {
    await deleteResource(ctx, providerReference, reference, { ignoreFutureAppointments });
    return true;
  }

  @Query(() => ContactProfileType, { nullable: true, description: lookupDescription("A user's general contact profile", 'the user is unknown or has no general profile') })
  async generalContactProfile(@Ctx() ctx: Context, @Arg('userReference', () => String) userReference: string): Promise<ContactProfileType | null> {
    const profile = await unlessNotFound(getGeneralContactProfile(ctx, userReference));
    return profile && toContactProfileView(profile);
  }

  @Mutation(() => ContactProfileType, { nullable: true, description: "Creates or replaces a user's general contact profile." })
  async saveGeneralContactProfile(
    @Ctx() ctx: Context,
    @Arg('userReference', () => String) userReference: string,
    @Arg('input', () => GeneralContactProfileInput) input: GeneralContactProfileInput,
  ): Promise<ContactProfileType> {
    return toContactProfileView(await saveGeneralContactProfile(ctx, userReference, plain(input)));
  }

  @Query(() => ContactProfileType, { nullable: true, description: lookupDescription('A provider-specific contact profile', 'the profile or the provider is unknown') })
  async contactProfile(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('reference', () => String) reference: string,
  ): Promise<ContactProfileType | null> {
    const profile = await unlessNotFound(getContactProfile(ctx, providerReference, reference));
    return profile && toContactProfileView(profile);
  }

  @Mutation(() => SaveContactProfilePayload, { nullable: true, description: 'Creates or updates a provider-specific contact profile.' })
  async saveContactProfile(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('input', () => ContactProfileInput) input: ContactProfileInput,
  ): Promise<SaveContactProfilePayload> {
    const { profile, created } = await saveContactProfile(ctx, providerReference, plain(input));
    return { contactProfile: toContactProfileView(profile), created };
  }
}
