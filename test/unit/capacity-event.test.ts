import { describe, expect, it } from 'vitest';
import {
  type GridAppointment,
  readCapacityEvent,
  slotKey,
  slotsOfTimeslotEvent,
  type TimeslotCapacityEvent,
  windowOfTimeslotEvent,
} from '../../services/live/capacity-event.js';

const NOW = new Date('2027-05-01T00:00:00Z');

function timeslot(overrides: Partial<TimeslotCapacityEvent> = {}): TimeslotCapacityEvent {
  return {
    scope: 'timeslot',
    version: 1,
    resourceId: 'r1',
    timeslotId: 't1',
    appointmentId: null,
    start: '2027-05-04T07:00:00.000Z',
    end: '2027-05-04T09:00:00.000Z',
    raster: 30,
    capacity: 3,
    capacityLeft: 3,
    open: true,
    previous: null,
    appointments: [],
    ...overrides,
  };
}

const lot = (overrides: Partial<GridAppointment>): GridAppointment => ({
  appointmentId: 'a1',
  timeslotId: 't1',
  productId: 'p1',
  start: '2027-05-04T07:30:00.000Z',
  end: '2027-05-04T08:00:00.000Z',
  capacity: 3,
  capacityLeft: 1,
  active: true,
  ...overrides,
});

const summary = (slots: ReturnType<typeof slotsOfTimeslotEvent>) =>
  slots!.map((s) => `${s.start.slice(11, 16)} ${s.kind === 'models.Bookable' ? 'B' : `L:${s.appointmentId}`} ${s.capacityLeft}/${s.capacity}`);

describe('slotsOfTimeslotEvent', () => {
  it('cuts an open timeslot into Bookable slots with the default capacity', () => {
    expect(summary(slotsOfTimeslotEvent(timeslot(), { now: NOW, limit: 100 }))).toEqual(['07:00 B 3/3', '07:30 B 3/3', '08:00 B 3/3', '08:30 B 3/3']);
  });

  it('gives an appointment made from the timeslot its own numbers and blocks slots other appointments overlap', () => {
    const appointments = [lot({}), lot({ appointmentId: 'crm', timeslotId: null, start: '2027-05-04T08:15:00.000Z', end: '2027-05-04T08:45:00.000Z', capacityLeft: 0 })];
    expect(summary(slotsOfTimeslotEvent(timeslot({ appointments }), { now: NOW, limit: 100 }))).toEqual([
      '07:00 B 3/3',
      '07:30 L:a1 1/3',
      '08:00 B 0/3',
      '08:30 B 0/3',
    ]);
  });

  it('an event about an appointment nearby announces only the appointments it names; the others keep what their own events said', () => {
    const appointments = [lot({}), lot({ appointmentId: 'a2', start: '2027-05-04T08:30:00.000Z', end: '2027-05-04T09:00:00.000Z', capacityLeft: 2 })];
    expect(summary(slotsOfTimeslotEvent(timeslot({ appointments, lots: ['a2'] }), { now: NOW, limit: 100 }))).toEqual(['07:00 B 3/3', '08:00 B 3/3', '08:30 L:a2 2/3']);
    expect(summary(slotsOfTimeslotEvent(timeslot({ appointments, lots: [] }), { now: NOW, limit: 100 }))).toEqual(['07:00 B 3/3', '08:00 B 3/3']);
    // A change of the timeslot itself (lots null) announces every appointment of it.
    expect(summary(slotsOfTimeslotEvent(timeslot({ appointments, lots: null }), { now: NOW, limit: 100 }))).toEqual([
      '07:00 B 3/3',
      '07:30 L:a1 1/3',
      '08:00 B 3/3',
      '08:30 L:a2 2/3',
    ]);
  });

  it('a cancelled appointment of the timeslot still holds its slot (0 places); it blocks nothing else', () => {
    const appointments = [lot({ active: false, capacityLeft: 0 })];
    expect(summary(slotsOfTimeslotEvent(timeslot({ appointments }), { now: NOW, limit: 100 }))).toEqual([
      '07:00 B 3/3',
      '07:30 L:a1 0/3',
      '08:00 B 3/3',
      '08:30 B 3/3',
    ]);
  });

  it('a closed timeslot shows 0 everywhere, its appointments included', () => {
    expect(summary(slotsOfTimeslotEvent(timeslot({ open: false, capacityLeft: 0, appointments: [lot({})] }), { now: NOW, limit: 100 }))).toEqual([
      '07:00 B 0/3',
      '07:30 L:a1 0/3',
      '08:00 B 0/3',
      '08:30 B 0/3',
    ]);
  });

  it('an appointment blocks the slots its blocked period (lead and follow-up time included) overlaps, not only its own time', () => {
    // A CRM appointment 08:00-08:15 whose product needs 30 minutes of follow-up: blocked 08:00-08:45.
    const appointments = [
      lot({ appointmentId: 'crm', timeslotId: null, start: '2027-05-04T08:00:00.000Z', end: '2027-05-04T08:15:00.000Z', blockedStart: '2027-05-04T08:00:00.000Z', blockedEnd: '2027-05-04T08:45:00.000Z', capacityLeft: 0 }),
    ];
    const slots = slotsOfTimeslotEvent(timeslot({ appointments }), { now: NOW, limit: 100 });
    expect(summary(slots)).toEqual(['07:00 B 3/3', '07:30 B 3/3', '08:00 B 0/3', '08:30 B 0/3']);
    // Free slots carry the blocked periods, so each subscriber's products can be checked with their own lead and follow-up time.
    expect(slots![1]!.room).toEqual({
      timeslot: { start: '2027-05-04T07:00:00.000Z', end: '2027-05-04T09:00:00.000Z' },
      busy: [{ start: '2027-05-04T08:00:00.000Z', end: '2027-05-04T08:45:00.000Z' }],
    });
  });

  it('reads appointments of payloads without blocked periods (older code) by their start and end', () => {
    const appointments = [lot({ appointmentId: 'crm', timeslotId: null, start: '2027-05-04T08:00:00.000Z', end: '2027-05-04T08:15:00.000Z', capacityLeft: 0 })];
    const event = readCapacityEvent(JSON.parse(JSON.stringify(timeslot({ appointments })))) as TimeslotCapacityEvent;
    expect(summary(slotsOfTimeslotEvent(event, { now: NOW, limit: 100 }))).toEqual(['07:00 B 3/3', '07:30 B 3/3', '08:00 B 0/3', '08:30 B 3/3']);
  });

  it('leaves out past slots and clips to the window [from, to) of slot starts', () => {
    const now = new Date('2027-05-04T07:30:00Z');
    expect(summary(slotsOfTimeslotEvent(timeslot(), { now, limit: 100 }))).toEqual(['08:00 B 3/3', '08:30 B 3/3']);
    const window = { now: NOW, from: new Date('2027-05-04T07:15:00Z'), to: new Date('2027-05-04T08:30:00Z'), limit: 100 };
    expect(summary(slotsOfTimeslotEvent(timeslot(), window))).toEqual(['07:30 B 3/3', '08:00 B 3/3']);
  });

  it('announces the slots a move removed with 0 places', () => {
    const moved = timeslot({ start: '2027-05-04T08:00:00.000Z', end: '2027-05-04T09:00:00.000Z', previous: { start: '2027-05-04T07:00:00.000Z', end: '2027-05-04T08:30:00.000Z', raster: 30 } });
    expect(summary(slotsOfTimeslotEvent(moved, { now: NOW, limit: 100 }))).toEqual(['08:00 B 3/3', '08:30 B 3/3', '07:00 B 0/3', '07:30 B 0/3']);
  });

  it('answers null above the limit, or when the event could not list its appointments; the window tells what to refetch', () => {
    const long = timeslot({ end: '2027-06-04T07:00:00.000Z', raster: 5 });
    expect(slotsOfTimeslotEvent(long, { now: NOW, limit: 500 })).toBeNull();
    expect(slotsOfTimeslotEvent(timeslot({ appointments: null }), { now: NOW, limit: 500 })).toBeNull();
    expect(windowOfTimeslotEvent(long, { now: NOW, to: new Date('2027-05-10T00:00:00Z') })).toEqual({
      start: new Date('2027-05-04T07:00:00.000Z'),
      end: new Date('2027-05-10T00:00:00Z'),
    });
  });

  it('keeps slots apart across the daylight-saving change (elapsed minutes, no repeated or lost slot)', () => {
    // 2027-10-31 in Europe/Berlin: 00:00-04:00 local is 5 hours of real time.
    const night = timeslot({ start: '2027-10-30T22:00:00.000Z', end: '2027-10-31T03:00:00.000Z', raster: 60 });
    const slots = slotsOfTimeslotEvent(night, { now: NOW, limit: 100 })!;
    expect(slots).toHaveLength(5);
    expect(new Set(slots.map((s) => slotKey(s.resourceId, s.start, s.end))).size).toBe(5);
  });
});

describe('readCapacityEvent', () => {
  it('reads a payload without scope (written by older code) as a slot event', () => {
    expect(
      readCapacityEvent({ resourceId: 'r1', appointmentId: 'a1', timeslotId: null, start: '2027-05-04T07:00:00.000Z', end: '2027-05-04T07:30:00.000Z', capacity: 3, capacityLeft: 2 }),
    ).toMatchObject({ scope: 'slot', kind: 'models.LotAppointment', version: 0, capacityLeft: 2 });
  });

  it('drops what is not a capacity event', () => {
    for (const payload of [null, 'x', {}, { resourceId: 'r1', start: 'soon', end: 'later', capacity: 1, capacityLeft: 1 }, { resourceId: 1 }]) {
      expect(readCapacityEvent(payload)).toBeUndefined();
    }
  });
});
