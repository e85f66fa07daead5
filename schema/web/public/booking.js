// The booking page: lists free slots a week at a time, keeps them live, reserves, books.
// Plain ES modules, no build step; every time is shown in the provider's zone (Intl with timeZone).
import { ApiError, bookSlot, listBookables, publicData, reserveSlot } from './booking-api.js';
import { h } from './booking-dom.js';
import { consumerFields, LIMITS, setFieldError, validateConsumer } from './booking-form.js';
import { calendarFile } from './booking-ics.js';
import { connectLive, slotKey } from './booking-live.js';
import { TEXTS } from './booking-texts.js';

const config = JSON.parse(document.getElementById('booking-config').textContent);
const t = TEXTS[config.lang] ?? TEXTS.de;
const zone = config.timeZone;
const resourceUuids = config.resources.map((r) => r.uuid);
const resourceNames = new Map(config.resources.map((r) => [r.uuid, r.name]));
const several = config.resources.length > 1;
const DAY_MS = 86_400_000;

// ---- dates: days are yyyy-MM-dd of the provider's zone, instants are formatted in that zone ----
const zonedDay = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: zone });
const dayHeading = new Intl.DateTimeFormat(t.locale, { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' });
const weekRange = new Intl.DateTimeFormat(t.locale, { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
const fullDay = new Intl.DateTimeFormat(t.locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: zone });
const clock = new Intl.DateTimeFormat(t.locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: zone });

const utcDate = (day) => new Date(`${day}T00:00:00Z`);
const addDays = (day, n) => new Date(utcDate(day).getTime() + n * DAY_MS).toISOString().slice(0, 10);
const mondayOf = (day) => addDays(day, -((utcDate(day).getUTCDay() + 6) % 7));
const todayInZone = () => zonedDay.format(new Date());
const timeRange = (slot) => `${clock.format(new Date(slot.start))}–${clock.format(new Date(slot.end))}`;
const whenText = (slot) => `${fullDay.format(new Date(slot.start))}, ${timeRange(slot)} (${zone})`;

// ---- state ----
const thisWeek = mondayOf(todayInZone());
const lastWeek = mondayOf(addDays(todayInZone(), 365));
// `week` of the page's URL opens the week of that day (within the year the listing looks ahead).
const firstWeek = config.week ? [thisWeek, mondayOf(config.week), lastWeek].sort()[1] : thisWeek;
const state = {
  week: firstWeek,
  /** slot key -> bookable of upcoming_bookables, plus `day` (its group key) */
  slots: new Map(),
  loading: false,
  loadedOnce: false,
  loadSeq: 0,
  /** live changes that arrived while a listing was on its way: applied on top of it */
  buffered: [],
  step: 'pick',
  hold: null,
  connected: false,
  connectedOnce: false,
  searchedAhead: false,
};
const bookingProcess = new Map();

// ---- skeleton ----
const app = document.getElementById('booking-app');
const title = config.resources.length === 1 ? config.resources[0].name : config.providerName;
const otherLanguage = new URL(location.href);
otherLanguage.searchParams.set('lang', t.otherLanguage.code);

const alertBox = h('div', { class: 'alert', role: 'alert' });
const politeBox = h('p', { class: 'sr-only', role: 'status' });
const prevButton = h('button', { type: 'button', class: 'week-button', onclick: () => turnWeek(-7) }, h('span', { 'aria-hidden': 'true' }, '‹ '), t.previousWeek);
const nextButton = h('button', { type: 'button', class: 'week-button', onclick: () => turnWeek(7) }, t.nextWeek, h('span', { 'aria-hidden': 'true' }, ' ›'));
const weekTitle = h('h2', { id: 'week-title', class: 'week-title', tabindex: '-1' });
const listNote = h('p', { class: 'list-note' });
const listStatus = h('p', { class: 'list-status', role: 'status' });
const days = h('div', { class: 'days' });
const liveStatus = h('p', { class: 'live-status' });
const pickStep = h('section', { class: 'step', 'aria-labelledby': 'week-title' }, h('div', { class: 'week-nav' }, prevButton, weekTitle, nextButton), listNote, listStatus, days, liveStatus);
const productStep = h('section', { class: 'step', 'aria-labelledby': 'product-title', hidden: true });
const formStep = h('section', { class: 'step', 'aria-labelledby': 'form-title', hidden: true });
const doneStep = h('section', { class: 'step', 'aria-labelledby': 'done-title', hidden: true });

app.replaceChildren(
  h(
    'header',
    { class: 'page-header' },
    h('div', {}, h('h1', {}, title), h('p', { class: 'zone' }, t.timesIn(zone))),
    h('a', { class: 'language', href: otherLanguage.toString(), lang: t.otherLanguage.code, hreflang: t.otherLanguage.code }, t.otherLanguage.label),
  ),
  alertBox,
  politeBox,
  pickStep,
  productStep,
  formStep,
  doneStep,
);
app.removeAttribute('aria-busy');

function showAlert(text) {
  alertBox.replaceChildren(...(text ? [h('p', {}, text)] : []));
}
const announce = (text) => {
  politeBox.textContent = text;
};

function showStep(step, focusId) {
  state.step = step;
  pickStep.hidden = step !== 'pick';
  productStep.hidden = step !== 'product';
  formStep.hidden = step !== 'form';
  doneStep.hidden = step !== 'done';
  if (step !== 'form') stopHoldTimer();
  const target = focusId && document.getElementById(focusId);
  if (target) target.focus();
}

// ---- listing ----
const weekWindow = () => ({ from: `${state.week}T00:00`, to: `${addDays(state.week, 7)}T00:00` });

async function load() {
  const seq = ++state.loadSeq;
  state.loading = true;
  state.buffered = [];
  if (!state.loadedOnce) listStatus.textContent = t.loading;
  try {
    const groups = await listBookables({ resources: resourceUuids, channelKey: config.channelKey, prdRef: config.prdRef, ...weekWindow() });
    if (seq !== state.loadSeq) return;
    state.slots = new Map();
    for (const [day, bookables] of groups) for (const slot of bookables) state.slots.set(slotKey(slot), { ...slot, day });
    state.loading = false;
    state.loadedOnce = true;
    const buffered = state.buffered;
    state.buffered = [];
    applyChanges(buffered);
    renderSlots();
    if (!groups.length && state.week === thisWeek && !config.week && !state.searchedAhead) await showFirstFreeWeek();
  } catch (error) {
    if (seq !== state.loadSeq) return;
    state.loading = false;
    listStatus.textContent = '';
    days.replaceChildren(
      h('p', { class: 'problem' }, t.errors.listFailed, ' ', errorText(error)),
      h('button', { type: 'button', class: 'secondary', onclick: () => load() }, t.errors.retry),
    );
  }
}

/**
 * Opened on an empty week without `week`: look ahead (the next 4 weeks, then
 * the rest of the year) and turn to the first week with a free time, so a
 * consumer does not have to page through empty weeks.
 */
async function showFirstFreeWeek() {
  state.searchedAhead = true;
  const end = addDays(todayInZone(), 366);
  const near = addDays(thisWeek, 35) < end ? addDays(thisWeek, 35) : end;
  for (const [from, to] of [[addDays(thisWeek, 7), near], [near, end]]) {
    if (from >= to) continue;
    const groups = await listBookables({ resources: resourceUuids, channelKey: config.channelKey, prdRef: config.prdRef, from: `${from}T00:00`, to: `${to}T00:00` });
    // The visitor turned the week meanwhile: theirs wins. (A reload of this week meanwhile changes nothing.)
    if (state.week !== thisWeek) return;
    if (groups.length) {
      changeWeek(Math.round((utcDate(mondayOf(groups[0][0])) - utcDate(state.week)) / DAY_MS));
      listNote.textContent = t.firstFreeWeek;
      return;
    }
  }
}

let reloadTimer = null;
/** A reload soon, once for a burst of reasons (live changes that need the slot's full listing entry). */
function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => load(), 150);
}

function renderWeek() {
  const end = addDays(state.week, 6);
  weekTitle.textContent = t.week(weekRange.formatRange(utcDate(state.week), utcDate(end)));
  prevButton.disabled = state.week <= thisWeek;
  nextButton.disabled = state.week >= lastWeek;
}

function renderSlots() {
  const focusedKey = document.activeElement?.dataset?.slot;
  const byDay = new Map();
  const sorted = [...state.slots.values()].sort((a, b) => Date.parse(a.start) - Date.parse(b.start) || (resourceNames.get(a.resource_uuid) ?? '').localeCompare(resourceNames.get(b.resource_uuid) ?? ''));
  for (const slot of sorted) {
    if (!byDay.has(slot.day)) byDay.set(slot.day, []);
    byDay.get(slot.day).push(slot);
  }
  listStatus.textContent = sorted.length ? t.slotCount(sorted.length) : t.noSlots;
  days.replaceChildren(
    ...[...byDay.keys()].sort().map((day) => {
      const headingId = `day-${day}`;
      return h(
        'section',
        { class: 'day', 'aria-labelledby': headingId },
        h('h3', { id: headingId }, dayHeading.format(utcDate(day))),
        h('ul', { class: 'slots' }, byDay.get(day).map((slot) => h('li', {}, slotButton(slot)))),
      );
    }),
  );
  if (focusedKey) {
    const again = days.querySelector(`[data-slot="${CSS.escape(focusedKey)}"]`);
    if (again) again.focus();
    else {
      announce(t.slotGone);
      weekTitle.focus();
    }
  }
}

function slotButton(slot) {
  const showPlaces = slot.capacity > 1;
  return h(
    'button',
    { type: 'button', class: 'slot', dataset: { slot: slotKey(slot) }, onclick: () => choose(slot) },
    h('span', { class: 'slot-time' }, timeRange(slot)),
    h('span', { class: 'sr-only' }, `, ${dayHeading.format(utcDate(slot.day))}`),
    several ? h('span', { class: 'slot-detail' }, resourceNames.get(slot.resource_uuid) ?? slot.resource_name ?? '') : null,
    slot.product_name && (several || slot.products?.length > 1) ? h('span', { class: 'slot-detail' }, slot.product_name) : null,
    showPlaces ? h('span', { class: 'slot-places' }, t.placesLeft(slot.capacity_left)) : null,
  );
}

/** The visitor's previous/next week. */
function turnWeek(days) {
  listNote.textContent = '';
  changeWeek(days);
}

function changeWeek(days) {
  state.week = addDays(state.week, days);
  state.slots = new Map();
  state.loadedOnce = false;
  renderWeek();
  showAlert('');
  watchWeek();
  load();
}

// ---- live capacity ----
/** Applies a message of the capacity feed: a slot the page shows changes in place or goes; anything new reloads the week. */
function applyChanges(changes) {
  if (state.loading) {
    state.buffered.push(...changes);
    return;
  }
  let changed = false;
  for (const change of changes) {
    if (change.scope === 'timeslot') {
      scheduleReload();
      continue;
    }
    const key = slotKey(change);
    const shown = state.slots.get(key);
    if (!shown) {
      // A freed or new slot: the feed has no product list or names, the listing has.
      if (change.capacity_left > 0) scheduleReload();
      continue;
    }
    if (change.capacity_left <= 0) {
      state.slots.delete(key);
    } else {
      const kindChanged = shown.kind !== change.kind || shown.appointment_uuid !== change.appointment_uuid;
      state.slots.set(key, { ...shown, kind: change.kind, appointment_uuid: change.appointment_uuid, timeslot_uuid: change.timeslot_uuid, capacity: change.capacity, capacity_left: change.capacity_left });
      // The first booking turns a Bookable into an appointment with one product: the listing knows which.
      if (kindChanged) scheduleReload();
    }
    changed = true;
  }
  if (changed) renderSlots();
}

let stopWatching = null;
function watchWeek() {
  stopWatching?.();
  stopWatching = live.watch({ resources: resourceUuids, channelKey: config.channelKey, ...weekWindow() }, applyChanges, () => {
    // The server ended the subscription: subscribe again after a pause and reload what may have been missed.
    liveStatus.textContent = t.reconnecting;
    setTimeout(() => {
      watchWeek();
      load();
    }, 3000);
  });
}

const live = connectLive({
  onConnected(wasRetry) {
    state.connected = true;
    liveStatus.textContent = t.live;
    // Pub/sub delivers at most once: what changed while no subscription listened is only in a fresh listing.
    if (wasRetry || (state.loadedOnce && !state.connectedOnce)) load();
    state.connectedOnce = true;
  },
  onDisconnected() {
    if (!state.connected) return;
    state.connected = false;
    liveStatus.textContent = t.reconnecting;
  },
});

// ---- choosing a slot and a product ----
function choose(slot) {
  showAlert('');
  const offered = slot.products ?? [];
  if (!slot.product_uuid && offered.length > 1) return showProductStep(slot, offered);
  reserve(slot, slot.product_uuid ?? offered[0]?.uuid ?? null);
}

function chosenSummary(slot) {
  return h('p', { class: 'chosen' }, h('strong', {}, whenText(slot)), h('br'), resourceNames.get(slot.resource_uuid) ?? slot.resource_name ?? '');
}

function showProductStep(slot, offered) {
  const form = h(
    'form',
    {
      onsubmit: (event) => {
        event.preventDefault();
        const picked = form.querySelector('input[name="product"]:checked');
        reserve(slot, picked.value);
      },
    },
    h(
      'fieldset',
      {},
      h('legend', {}, t.chooseProduct),
      offered.map((product, index) =>
        h('div', { class: 'choice' }, h('input', { type: 'radio', name: 'product', id: `product-${index}`, value: product.uuid, checked: index === 0 }), h('label', { for: `product-${index}` }, product.name)),
      ),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t.continue), backButton()),
  );
  productStep.replaceChildren(h('h2', { id: 'product-title', tabindex: '-1' }, t.yourSlot), chosenSummary(slot), form);
  showStep('product', 'product-title');
}

function backButton() {
  return h('button', { type: 'button', class: 'secondary', onclick: () => backToList() }, t.back);
}

function backToList(alert) {
  state.hold = null;
  showStep('pick', 'week-title');
  if (alert) showAlert(alert);
  load();
}

async function reserve(slot, productUuid) {
  announce(t.reserving);
  const sentAt = Date.now();
  const body = {
    ...(slot.kind === 'models.LotAppointment' ? { appointment_uuid: slot.appointment_uuid } : { timeslot_uuid: slot.timeslot_uuid }),
    product_uuid: productUuid,
    from: new Date(slot.start).toISOString(),
    to: new Date(slot.end).toISOString(),
  };
  try {
    const [answer, process] = await Promise.all([reserveWithRetry(slot.resource_uuid, body), processOf(slot.resource_uuid)]);
    // (process is null when public_data failed: the place is held all the same, the texts stay neutral.)
    // The server's hold runs from its answer; counting from the request errs on the safe side.
    state.hold = { participation: answer.participation, expiresAt: sentAt + config.holdMs, slot, productUuid, process, warned: false };
    showForm();
  } catch (error) {
    backToList(errorText(error, 'reserve'));
  }
}

async function reserveWithRetry(resource, body) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await reserveSlot(resource, config.channelKey, body);
    } catch (error) {
      // Two first bookings of one timeslot at the same moment: the service asks the later one to try again.
      if (!(error instanceof ApiError && error.status === 409 && error.code === 'CONFLICT') || attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
    }
  }
}

/** IMMEDIATE or REQUESTED for the resource on the page's channel (public_data), or null when that could not be read. */
async function processOf(resource) {
  if (!bookingProcess.has(resource)) {
    try {
      const data = await publicData(resource, config.channelKey);
      bookingProcess.set(resource, data?.channel?.bookingProcess === 'REQUESTED' ? 'REQUESTED' : 'IMMEDIATE');
    } catch {
      return null;
    }
  }
  return bookingProcess.get(resource);
}

// ---- the form ----
function showForm() {
  const { slot, process } = state.hold;
  const submit = h('button', { type: 'submit', class: 'primary' }, process === 'REQUESTED' ? t.submitRequest : process === 'IMMEDIATE' ? t.submitBook : t.submitNeutral);
  const form = h('form', { novalidate: true, onsubmit: (event) => submitForm(event, form, submit) }, h('h3', {}, t.yourDetails), consumerFields(t), h('div', { class: 'actions' }, submit, backButton()));
  formStep.replaceChildren(h('h2', { id: 'form-title', tabindex: '-1' }, t.yourSlot), chosenSummary(slot), h('p', { class: 'hold', role: 'timer', id: 'hold' }), form);
  showStep('form', 'form-title');
  startHoldTimer();
}

let holdTimer = null;
function startHoldTimer() {
  stopHoldTimer();
  tickHold();
  holdTimer = setInterval(tickHold, 1000);
}
function stopHoldTimer() {
  clearInterval(holdTimer);
  holdTimer = null;
}
function tickHold() {
  const hold = state.hold;
  const element = document.getElementById('hold');
  if (!hold || !element) return stopHoldTimer();
  const left = Math.max(0, Math.ceil((hold.expiresAt - Date.now()) / 1000));
  if (left > 0) {
    element.textContent = t.heldFor(`${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`);
    if (left <= 60 && !hold.warned) {
      hold.warned = true;
      announce(t.heldOneMinute);
    }
    return;
  }
  stopHoldTimer();
  element.textContent = '';
  element.classList.add('expired');
  showAlert(t.holdExpired);
  // The place is no longer held: the list shows again whether it is still free.
  load();
}

async function submitForm(event, form, submit) {
  event.preventDefault();
  showAlert('');
  const problems = validateConsumer(form, t);
  if (problems.length) {
    showAlert(t.fixErrors);
    form.elements.namedItem(problems[0]).focus();
    return;
  }
  const hold = state.hold;
  const value = (name) => form.elements.namedItem(name).value.trim();
  const body = {
    start: hold.slot.start,
    end: hold.slot.end,
    timeslot_uuid: hold.participation.appointment_uuid,
    product_uuid: hold.productUuid,
    placeholder_id: hold.participation.customer_uuid,
    email: value('email'),
    firstname: value('firstname'),
    lastname: value('lastname'),
    mobile: value('mobile') || null,
    message: value('message') || null,
    locale: config.lang,
    channelKey: config.channelKey,
  };
  const label = submit.textContent;
  submit.disabled = true;
  submit.textContent = t.sending;
  try {
    const answer = await bookSlot(hold.slot.resource_uuid, body);
    hold.process ??= await processOf(hold.slot.resource_uuid);
    showDone(answer.createdAppointment, body.email);
  } catch (error) {
    submit.disabled = false;
    submit.textContent = label;
    handleBookingError(error, form);
  }
}

function handleBookingError(error, form) {
  if (error instanceof ApiError && error.status === 400) {
    const field = /^(firstname|lastname|email|mobile|message)\b/.exec(error.message)?.[1];
    if (field) {
      setFieldError(form, field, field === 'message' ? t.invalid.message(LIMITS.message) : t.invalid[field]);
      showAlert(t.fixErrors);
      form.elements.namedItem(field).focus();
      return;
    }
  }
  const text = errorText(error, 'book');
  if (error instanceof ApiError && (error.status === 412 || error.status === 400)) return backToList(text);
  showAlert(text);
}

/** The server's answer in plain words; `taken` and `gone` also mean the list is reloaded. */
function errorText(error, during) {
  if (!(error instanceof ApiError)) return t.errors.server;
  if (error.status === 0) return t.errors.network;
  if (error.status === 412) return t.errors.taken;
  if (error.status === 429) return t.errors.rateLimited(error.retryAfterSeconds);
  if (error.status === 409 && error.code === 'AppointmentAlreadyBookedException') return t.errors.alreadyBooked;
  if (error.status === 403) return t.errors.forbidden;
  if (error.status === 400 && during) return t.errors.gone;
  if (error.status >= 400 && error.status < 500) return t.errors.invalid(error.message);
  return t.errors.server;
}

// ---- confirmation ----
function showDone(created, email) {
  const hold = state.hold;
  const [title, text] = hold.process === 'REQUESTED' ? [t.requestedTitle, t.requestedText] : hold.process === 'IMMEDIATE' ? [t.bookedTitle, t.bookedText] : [t.receivedTitle, t.receivedText];
  const slot = { ...hold.slot, start: created.start, end: created.end };
  const address = hold.participation.formatedAddress;
  const channel = created.contact_channel;
  const rows = [
    [t.what, created.product_name],
    [t.with, created.resource_name],
    [t.when, whenText(slot)],
    [t.where, address],
    [t.contact, channel ? `${t.contactTypes[channel.type] ?? channel.type}: ${channel.value}` : null],
  ].filter(([, value]) => value);
  const ics = calendarFile({
    uid: `participation-${hold.participation.uuid}@${config.icsUidHost}`,
    start: created.start,
    end: created.end,
    summary: created.product_name ? `${created.product_name} – ${created.resource_name}` : created.resource_name,
    location: address,
    description: `${t.cancelLink}: ${created.cancelLink}`,
  });
  doneStep.replaceChildren(
    h('h2', { id: 'done-title', tabindex: '-1' }, title),
    h('p', {}, text(email)),
    h('dl', { class: 'details' }, rows.map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value)))),
    h(
      'ul',
      { class: 'links' },
      h('li', {}, h('a', { href: ics, download: 'termin.ics' }, t.addToCalendar)),
      h('li', {}, h('a', { href: created.cancelLink, target: '_blank', rel: 'noopener' }, t.cancelLink)),
    ),
    h('button', { type: 'button', class: 'secondary', onclick: () => backToList() }, t.bookAnother),
  );
  state.hold = null;
  showStep('done', 'done-title');
}

// ---- the widget's frame tells the host page its height (embed.js resizes the iframe) ----
if (config.embed && window.parent !== window) {
  const post = () => window.parent.postMessage({ type: 'booking-widget:height', height: document.documentElement.scrollHeight }, '*');
  new ResizeObserver(post).observe(document.body);
  post();
}

renderWeek();
watchWeek();
load();
