// The confirmation's "add to calendar": an .ics made in the browser.

/**
 * An .ics (METHOD:PUBLISH) of one booking as a blob: URL to download. `uid`
 * is the one of the confirmation mail's invitation, so a calendar that gets
 * both keeps one event. Times in UTC; lines folded as RFC 5545 asks.
 */
export function calendarFile({ uid, start, end, summary, location, description }) {
  const stamp = (date) => new Date(date).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const escape = (text) => String(text).replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\r?\n/g, '\\n');
  const fold = (line) => {
    const parts = [];
    for (let rest = line; rest.length; rest = rest.slice(60)) parts.push(rest.slice(0, 60));
    return parts.join('\r\n ');
  };
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//booking-service//booking page//EN',
    'METHOD:PUBLISH',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    `DTSTAMP:${stamp(Date.now())}`,
    `DTSTART:${stamp(start)}`,
    `DTEND:${stamp(end)}`,
    `SUMMARY:${escape(summary)}`,
    location ? `LOCATION:${escape(location)}` : null,
    description ? `DESCRIPTION:${escape(description)}` : null,
    'END:VEVENT',
    'END:VCALENDAR',
  ].filter(Boolean);
  return URL.createObjectURL(new Blob([`${lines.map(fold).join('\r\n')}\r\n`], { type: 'text/calendar;charset=utf-8' }));
}
