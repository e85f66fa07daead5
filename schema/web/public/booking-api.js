// The public booking-flow REST API (spec: "Booking flow (no authentication)"), as the page uses it.

/** An answer other than 2xx, with the service's error code; status 0 means the server was not reached. */
export class ApiError extends Error {
  constructor(status, code, message, retryAfterSeconds) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

async function request(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', error instanceof Error ? error.message : String(error), null);
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const first = data && Array.isArray(data.errors) ? data.errors[0] : null;
    const retryAfter = Number.parseInt(response.headers.get('Retry-After') ?? '', 10);
    throw new ApiError(response.status, first?.errorCode ?? String(response.status), first?.message ?? response.statusText, Number.isFinite(retryAfter) ? retryAfter : null);
  }
  return data;
}

const resourcePath = (uuid) => encodeURIComponent(uuid);

function query(pairs) {
  const params = new URLSearchParams();
  for (const [name, value] of pairs) if (value !== undefined && value !== null && value !== '') params.append(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * Bookable slots of the resources in [from, to) (wall-clock times of the
 * provider's zone), grouped by day (`yyyy-MM-dd` in the provider's zone).
 * Returns [day, bookables][] in day order; empty when nothing is bookable.
 */
export async function listBookables({ resources, channelKey, prdRef, from, to }) {
  const [first, ...more] = resources;
  const body = await request(
    'GET',
    `/resources/${resourcePath(first)}/upcoming_bookables${query([
      ['groupFormat', 'yyyy-MM-dd'],
      ['channelKey', channelKey],
      ['prdRef', prdRef],
      ['from', from],
      ['to', to],
      ...more.map((uuid) => ['ref', uuid]),
    ])}`,
  );
  if (!body) return [];
  return Object.entries(body)
    .filter(([key]) => key !== 'public_visible')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Contact, resource, provider and the channel's booking process (IMMEDIATE or REQUESTED) of one resource. */
export const publicData = (resource, channelKey) => request('POST', `/resources/public_data${query([['ref', resource], ['channelKey', channelKey]])}`);

/** Holds a slot for the consumer (RESERVED participation); the answer names the appointment and the placeholder id. */
export const reserveSlot = (resource, channelKey, body) => request('POST', `/rest/1/resources/${resourcePath(resource)}/reserve_appointment${query([['channelKey', channelKey]])}`, body);

/** Completes the hold with the consumer's data; the answer carries the cancel link. */
export const bookSlot = (resource, body) => request('POST', `/resources/${resourcePath(resource)}/create_appointment_with_consumer`, body);
