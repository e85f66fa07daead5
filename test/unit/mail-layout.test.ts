import { describe, expect, it } from 'vitest';
import { calendarInvite } from '../../services/mail/calendar-invite.js';
import { isPermanentMailError } from '../../services/mail/mail-transport.js';
import { composeMail, mailLanguage } from '../../services/mail/templates/layout.js';
import { formatWhen } from '../../services/mail/templates/participation-mail.js';
import { parseIcs } from '../support/mail-fixtures.js';

describe('mailLanguage', () => {
  it('takes the first candidate we write in, by primary subtag; German otherwise', () => {
    expect(mailLanguage('en', 'de')).toBe('en');
    expect(mailLanguage(null, 'en-GB', 'de')).toBe('en');
    expect(mailLanguage('fr', undefined, 'en')).toBe('en');
    expect(mailLanguage('de_AT')).toBe('de');
    expect(mailLanguage('fr', 'it')).toBe('de');
    expect(mailLanguage()).toBe('de');
  });
});

describe('composeMail', () => {
  it('writes the same content as plain text and escaped HTML', () => {
    const mail = composeMail({
      to: 'a@example.com',
      subject: 'S',
      greeting: 'Hallo <Ann>,',
      paragraphs: ['Eins & zwei.'],
      details: [
        ['Wann', 'Montag'],
        ['Wo', null],
      ],
      quote: { label: 'Nachricht', text: 'Zeile 1\nZeile <2>' },
      link: { label: 'Absagen', url: 'https://x.test/cancel/a?b=1&c=2' },
      closing: ['Viele Grüße', 'Team'],
    });
    expect(mail.text).toBe('Hallo <Ann>,\n\nEins & zwei.\n\nWann: Montag\n\nNachricht:\n> Zeile 1\n> Zeile <2>\n\nAbsagen:\nhttps://x.test/cancel/a?b=1&c=2\n\nViele Grüße\nTeam\n');
    expect(mail.html).toContain('<p>Hallo &lt;Ann&gt;,</p>');
    expect(mail.html).toContain('Zeile 1<br>\nZeile &lt;2&gt;');
    expect(mail.html).toContain('href="https://x.test/cancel/a?b=1&amp;c=2"');
    expect(mail.html).not.toContain('Wo</th>');
    expect(mail.attachments).toBeUndefined();
  });
});

describe('calendarInvite', () => {
  const base = {
    uid: 'participation-1@booking.test',
    start: new Date('2027-07-05T13:00:00Z'),
    end: new Date('2027-07-05T14:00:00Z'),
    timeZone: 'Europe/Berlin',
    summary: 'Besichtigung – Anna',
    location: 'Invalidenstraße 1, 10115 Berlin',
    description: null,
    organizer: { name: 'Makler', email: 'office@example.com' },
    attendee: { name: 'Clara', email: 'clara@example.com' },
    language: 'de',
  };

  it('REQUEST: wall-clock time of the zone with TZID, its VTIMEZONE, UTC DTSTAMP, SEQUENCE 0', () => {
    const attachment = calendarInvite({ ...base, method: 'REQUEST' });
    expect(attachment).toMatchObject({ filename: 'invite.ics', contentType: 'text/calendar; charset=utf-8; method=REQUEST' });
    const ics = parseIcs(attachment.content);
    expect(ics.calendar.METHOD).toBe('REQUEST');
    expect(ics.vtimezones).toEqual(['Europe/Berlin']);
    expect(ics.raw).toMatch(/BEGIN:DAYLIGHT[\s\S]*TZOFFSETTO:\+0200/);
    expect(ics.event.DTSTART).toBe(';TZID=Europe/Berlin:20270705T150000');
    expect(ics.event.DTEND).toBe(';TZID=Europe/Berlin:20270705T160000');
    expect(ics.event.DTSTAMP).toMatch(/^:\d{8}T\d{6}Z$/);
    expect(ics.event.UID).toBe(':participation-1@booking.test');
    expect(ics.event.SEQUENCE).toBe(':0');
    expect(ics.event.STATUS).toBe(':CONFIRMED');
    expect(ics.raw).not.toContain('X-WR-TIMEZONE');
  });

  it('CANCEL: same UID, higher SEQUENCE, STATUS CANCELLED; another zone gets its own VTIMEZONE', () => {
    const attachment = calendarInvite({ ...base, method: 'CANCEL', timeZone: 'America/New_York' });
    expect(attachment.filename).toBe('cancel.ics');
    const ics = parseIcs(attachment.content);
    expect(ics.calendar.METHOD).toBe('CANCEL');
    expect(ics.event.UID).toBe(':participation-1@booking.test');
    expect(ics.event.SEQUENCE).toBe(':1');
    expect(ics.event.STATUS).toBe(':CANCELLED');
    expect(ics.vtimezones).toEqual(['America/New_York']);
    expect(ics.event.DTSTART).toBe(';TZID=America/New_York:20270705T090000');
  });

  it('in the hour repeated when clocks go back, start and end are written in UTC (a TZID time there means its first occurrence)', () => {
    // 02:00–02:30 at +01:00, the second 02:00 of 2027-10-31 in Berlin; with TZID a calendar would put it an hour early.
    for (const [start, end] of [
      ['2027-10-31T01:00:00Z', '2027-10-31T01:30:00Z'],
      ['2027-10-31T00:30:00Z', '2027-10-31T01:00:00Z'],
      ['2027-10-31T00:30:00Z', '2027-10-31T03:00:00Z'],
    ] as const) {
      const ics = parseIcs(calendarInvite({ ...base, method: 'REQUEST', start: new Date(start), end: new Date(end) }).content);
      const utc = (iso: string) => `:${iso.replace(/[-:]/g, '').replace('.000', '')}`;
      expect(ics.event.DTSTART, start).toBe(utc(start));
      expect(ics.event.DTEND, end).toBe(utc(end));
    }
    // An hour later the time is unambiguous again: TZID as usual.
    const after = parseIcs(calendarInvite({ ...base, method: 'REQUEST', start: new Date('2027-10-31T02:00:00Z'), end: new Date('2027-10-31T02:30:00Z') }).content);
    expect(after.event.DTSTART).toBe(';TZID=Europe/Berlin:20271031T030000');
  });
});

describe('isPermanentMailError', () => {
  it('SMTP 5xx and envelope errors are permanent, 4xx and connection errors are not', () => {
    expect(isPermanentMailError({ responseCode: 550 })).toBe(true);
    expect(isPermanentMailError({ responseCode: 451 })).toBe(false);
    expect(isPermanentMailError({ code: 'EENVELOPE' })).toBe(true);
    expect(isPermanentMailError({ code: 'ECONNECTION' })).toBe(false);
    expect(isPermanentMailError(new Error('x'))).toBe(false);
  });
});

describe('formatWhen', () => {
  const when = (start: string, end: string, language: 'de' | 'en' = 'de') => formatWhen({ start: new Date(start), end: new Date(end) }, 'Europe/Berlin', language);

  it('start and end in the provider’s zone, the end’s day only when it differs', () => {
    expect(when('2027-03-01T09:00:00Z', '2027-03-01T10:00:00Z')).toBe('Montag, 1. März 2027, 10:00 – 11:00 Uhr (Europe/Berlin)');
    expect(when('2027-03-01T22:00:00Z', '2027-03-02T00:00:00Z', 'en')).toBe('Monday, 1 March 2027, 23:00 – Tuesday, 2 March 2027, 01:00 (Europe/Berlin)');
  });

  it('in the hour repeated when clocks go back, each time that falls there carries its offset', () => {
    expect(when('2027-10-31T00:00:00Z', '2027-10-31T00:30:00Z')).toBe('Sonntag, 31. Oktober 2027, 02:00 (GMT+2) – 02:30 Uhr (GMT+2) (Europe/Berlin)');
    expect(when('2027-10-31T01:00:00Z', '2027-10-31T01:30:00Z')).toBe('Sonntag, 31. Oktober 2027, 02:00 (GMT+1) – 02:30 Uhr (GMT+1) (Europe/Berlin)');
    // The end before the start on the clock: the offsets say why.
    expect(when('2027-10-31T00:30:00Z', '2027-10-31T01:00:00Z', 'en')).toBe('Sunday, 31 October 2027, 02:30 (GMT+2) – 02:00 (GMT+1) (Europe/Berlin)');
    expect(when('2027-10-31T00:30:00Z', '2027-10-31T02:30:00Z')).toBe('Sonntag, 31. Oktober 2027, 02:30 (GMT+2) – 03:30 Uhr (Europe/Berlin)');
  });
});
