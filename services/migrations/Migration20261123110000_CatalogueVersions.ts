import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 10, booking write path: what a booking reads about its resources
 * before its transaction (channel settings, products, time zone, the CRM's
 * language; see booking/booking-request.ts) is kept per gateway process,
 * and every booking transaction checks, with its first statement, that the
 * catalogue of the providers involved is still the one it read. The
 * version of a provider's catalogue moves with every change of its
 * resources, their channel settings and listed products, its products, its
 * time zone and its CRM's language, by these triggers, whoever writes.
 */
export class Migration20261123110000_CatalogueVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "provider_catalogue" ("provider_id" uuid primary key, "version" bigint not null);`);
    this.addSql(`
      create or replace function catalogue_changed() returns trigger language plpgsql as $$
      declare
        changed record;
        providers uuid[];
      begin
        if tg_op = 'DELETE' then changed := old; else changed := new; end if;
        if tg_table_name = 'provider' then
          providers := array[changed.id];
        elsif tg_table_name = 'crm_integration' then
          providers := array(select p.id from provider p where p.crm_id = changed.id);
        elsif tg_table_name in ('resource', 'product') then
          providers := array[changed.provider_id];
          if tg_op = 'UPDATE' then
            if old.provider_id is distinct from new.provider_id then providers := providers || old.provider_id; end if;
          end if;
        else
          -- booking_channel_setting, resource_product: the provider of the resource
          providers := array(select r.provider_id from resource r where r.id = changed.resource_id);
          if tg_op = 'UPDATE' then
            if old.resource_id is distinct from new.resource_id then
              providers := providers || array(select r.provider_id from resource r where r.id = old.resource_id);
            end if;
          end if;
        end if;
        insert into provider_catalogue (provider_id, version)
          select distinct p, 1 from unnest(providers) as p where p is not null
        on conflict (provider_id) do update set version = provider_catalogue.version + 1;
        return null;
      end
      $$;`);
    this.addSql(`create trigger provider_catalogue_changed after update of time_zone on "provider" for each row execute function catalogue_changed();`);
    this.addSql(`create trigger crm_integration_catalogue_changed after update of language on "crm_integration" for each row execute function catalogue_changed();`);
    for (const table of ['resource', 'product', 'booking_channel_setting', 'resource_product']) {
      this.addSql(`create trigger ${table}_catalogue_changed after insert or update or delete on "${table}" for each row execute function catalogue_changed();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of ['provider', 'crm_integration', 'resource', 'product', 'booking_channel_setting', 'resource_product']) {
      this.addSql(`drop trigger if exists ${table}_catalogue_changed on "${table}";`);
    }
    this.addSql(`drop function if exists catalogue_changed();`);
    this.addSql(`drop table if exists "provider_catalogue";`);
  }
}
