import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { createAccount, getAccount, toAccountView } from '../../../services/accounts/account.service.js';
import type { Context } from '../../../services/kernel/context.js';
import { addStaff, createProvider, getProvider, listStaff, removeStaff, toProviderView } from '../../../services/providers/provider.service.js';
import { createUser, getUser } from '../../../services/users/user.service.js';
import { toUserView } from '../../../services/users/user.view.js';
import { unlessNotFound } from '../../../services/kernel/errors.js';
import { lookupDescription } from '../not-found.js';
import { plain } from '../plain.js';
import {
  AccountType,
  CreateAccountInput,
  CreateAccountPayload,
  CreateProviderInput,
  CreateProviderPayload,
  CreateUserInput,
  CreateUserPayload,
  ProviderType,
  UserType,
} from './setup.types.js';

/** Users, accounts, providers and staff; every operation needs the CRM key. */
@Resolver()
export class SetupResolver {
  @Query(() => UserType, { nullable: true, description: lookupDescription('A user of the calling CRM by reference', 'the CRM has no user with this reference') })
  async user(@Ctx() ctx: Context, @Arg('reference', () => String) reference: string): Promise<UserType | null> {
    const user = await unlessNotFound(getUser(ctx, reference));
    return user && toUserView(user);
  }

  @Mutation(() => CreateUserPayload, { nullable: true, description: 'Creates or returns a user (spec rules 1-4 of create user).' })
  async createUser(@Ctx() ctx: Context, @Arg('input', () => CreateUserInput) input: CreateUserInput): Promise<CreateUserPayload> {
    const { user, outcome } = await createUser(ctx, plain(input));
    return { user: toUserView(user), created: outcome === 'created', outcome };
  }

  @Query(() => AccountType, { nullable: true, description: lookupDescription('An account of the calling CRM by reference', 'the CRM has no account with this reference') })
  async account(@Ctx() ctx: Context, @Arg('reference', () => String) reference: string): Promise<AccountType | null> {
    const account = await unlessNotFound(getAccount(ctx, reference));
    return account && toAccountView(account);
  }

  @Mutation(() => CreateAccountPayload, { nullable: true, description: 'Creates an account, or returns the existing one unchanged.' })
  async createAccount(@Ctx() ctx: Context, @Arg('input', () => CreateAccountInput) input: CreateAccountInput): Promise<CreateAccountPayload> {
    const { account, created } = await createAccount(ctx, plain(input));
    return { account: toAccountView(account), created };
  }

  @Query(() => ProviderType, { nullable: true, description: lookupDescription('A provider of the calling CRM by reference', "the CRM has no provider with this reference (another CRM's provider is not revealed)") })
  async provider(@Ctx() ctx: Context, @Arg('reference', () => String) reference: string): Promise<ProviderType | null> {
    const provider = await unlessNotFound(getProvider(ctx, reference));
    return provider && toProviderView(provider);
  }

  @Mutation(() => CreateProviderPayload, { nullable: true, description: 'Creates a provider; its owner becomes staff.' })
  async createProvider(@Ctx() ctx: Context, @Arg('input', () => CreateProviderInput) input: CreateProviderInput): Promise<CreateProviderPayload> {
    const { provider, created } = await createProvider(ctx, plain(input));
    return { provider: toProviderView(provider), created };
  }

  @Query(() => [UserType], { description: "The provider's staff, owner first." })
  async staff(@Ctx() ctx: Context, @Arg('providerReference', () => String) providerReference: string): Promise<UserType[]> {
    return (await listStaff(ctx, providerReference)).map(toUserView);
  }

  @Mutation(() => UserType, { nullable: true, description: "Adds a user of the same CRM to a provider's staff." })
  async addStaffMember(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('userReference', () => String) userReference: string,
  ): Promise<UserType> {
    return toUserView((await addStaff(ctx, providerReference, { userReference })).user);
  }

  @Mutation(() => Boolean, { nullable: true, description: "Removes a user from a provider's staff; the owner stays." })
  async removeStaffMember(
    @Ctx() ctx: Context,
    @Arg('providerReference', () => String) providerReference: string,
    @Arg('userReference', () => String) userReference: string,
  ): Promise<boolean> {
    await removeStaff(ctx, providerReference, userReference);
    return true;
  }
}
