import { Account } from '../accounts/account.entity.js';
import { Appointment } from '../appointments/appointment.entity.js';
import { ContactChannel } from '../contact-profiles/contact-channel.entity.js';
import { ContactProfile } from '../contact-profiles/contact-profile.entity.js';
import { CrmIntegration } from '../crm/crm-integration.entity.js';
import { Customer } from '../customers/customer.entity.js';
import { MailDelivery } from '../mail/mail-delivery.entity.js';
import { OutboxMessage } from '../outbox/outbox-message.entity.js';
import { Participation } from '../participations/participation.entity.js';
import { Product } from '../products/product.entity.js';
import { Provider } from '../providers/provider.entity.js';
import { StaffMembership } from '../providers/staff-membership.entity.js';
import { BookingChannelSetting } from '../resources/booking-channel-setting.entity.js';
import { Resource } from '../resources/resource.entity.js';
import { Timeslot } from '../timeslots/timeslot.entity.js';
import { User } from '../users/user.entity.js';
import { Webhook, WebhookDelivery } from '../webhooks/webhook.entity.js';

/** Every entity of the domain, in one list the ORM and the migrations share. */
export const ENTITIES = [
  CrmIntegration,
  User,
  Account,
  Provider,
  StaffMembership,
  Product,
  ContactProfile,
  ContactChannel,
  Resource,
  BookingChannelSetting,
  Timeslot,
  Appointment,
  Participation,
  Customer,
  OutboxMessage,
  MailDelivery,
  Webhook,
  WebhookDelivery,
];
