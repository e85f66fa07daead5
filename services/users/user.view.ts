import type { User } from './user.entity.js';

/** The user as the API shows it; absent optional values are null. */
export interface UserView {
  reference: string | null;
  email: string;
  username: string | null;
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  mobile: string | null;
}

export const toUserView = (user: User): UserView => ({
  reference: user.reference,
  email: user.email,
  username: user.username,
  firstName: user.firstName,
  lastName: user.lastName,
  phone: user.phone,
  mobile: user.mobile,
});
