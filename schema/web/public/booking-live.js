// The page's only use of GraphQL: live capacity through the `capacityChanged`
// subscription over graphql-ws (the library's browser build, loaded before this
// module as the global `graphqlWs`). Should the schema's names change, this is
// the one file to adapt.

const CAPACITY_CHANGED = `subscription BookingPageCapacity($refs: [String!]!, $from: String, $to: String, $channelKey: ChannelKey) {
  capacityChanged(refs: $refs, from: $from, to: $to, channelKey: $channelKey) {
    scope resourceUuid from to
    bookable { id resourceUuid timeslotUuid appointmentUuid productUuid kind start end capacity capacityLeft }
  }
}`;

/** GraphQL's kind names → the REST kinds the page's listing uses. */
const KINDS = { BOOKABLE: 'models.Bookable', LOT_APPOINTMENT: 'models.LotAppointment' };

/**
 * A change in the vocabulary of the REST listing the page shows: a slot
 * (`scope` "slot") or a period to reload (`scope` "timeslot").
 */
function asListingChange(change) {
  const slot = change.bookable;
  if (!slot) return { scope: 'timeslot', resource_uuid: change.resourceUuid, start: change.from, end: change.to };
  return {
    scope: 'slot',
    resource_uuid: slot.resourceUuid,
    timeslot_uuid: slot.timeslotUuid,
    appointment_uuid: slot.appointmentUuid,
    product_uuid: slot.productUuid,
    kind: KINDS[slot.kind] ?? slot.kind,
    start: slot.start,
    end: slot.end,
    capacity: slot.capacity,
    capacity_left: slot.capacityLeft,
  };
}

/**
 * Opens the WebSocket to the gateway at once and keeps it: after a lost
 * connection the client reconnects (with growing pauses) and re-subscribes by
 * itself. `onConnected(wasRetry)` runs on every (re)connection, so the page can
 * reload what it missed meanwhile (pub/sub delivers at most once);
 * `onDisconnected()` when the connection is lost.
 */
export function connectLive({ onConnected, onDisconnected }) {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  const client = globalThis.graphqlWs.createClient({
    url,
    lazy: false,
    keepAlive: 10_000,
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
    onNonLazyError: () => undefined,
    on: {
      connected: (_socket, _payload, wasRetry) => onConnected(wasRetry),
      closed: () => onDisconnected(),
    },
  });
  return {
    /**
     * Follows the capacity of the slots of `resources` starting in [from, to)
     * (wall-clock times of the provider's zone) on the channel; `onChanges`
     * gets each message's list of slots, `onEnded` runs when the server ends
     * the subscription with an error. Returns the function that stops it.
     */
    watch({ resources, from, to, channelKey }, onChanges, onEnded) {
      return client.subscribe(
        { query: CAPACITY_CHANGED, variables: { refs: resources, from, to, channelKey } },
        {
          next: (result) => {
            if (result.data?.capacityChanged) onChanges(result.data.capacityChanged.map(asListingChange));
          },
          // The server ended this subscription (e.g. a slow consumer): the page subscribes again and reloads.
          error: () => onEnded(),
          complete: () => undefined,
        },
      );
    },
    dispose: () => client.dispose(),
  };
}

/** A slot's identity in the listing and in the feed: resource plus start and end instants. */
export const slotKey = (slot) => `${slot.resource_uuid}|${Date.parse(slot.start)}|${Date.parse(slot.end)}`;
