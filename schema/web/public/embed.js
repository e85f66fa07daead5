/*
 * Booking widget: <script src="https://<booking host>/embed.js" data-ref="<resource>" async></script>
 * renders the booking page into an iframe right after the script tag (or into the element that
 * data-target names) and keeps the iframe as tall as its content. Attributes: data-ref (one or
 * more resources, separated by spaces or commas), data-channel (default RESOURCE_REFERENCE;
 * CALENDAR_PUBLIC for a plug-in with all resources), data-product, data-lang (de|en),
 * data-week (yyyy-MM-dd: open that day's week), data-title (the iframe's accessible name).
 */
(() => {
  const script = document.currentScript;
  if (!script || !script.src) return;
  const origin = new URL(script.src).origin;
  const data = script.dataset;
  const refs = (data.ref || '').split(/[\s,]+/).filter(Boolean);
  if (!refs.length) {
    console.error('booking widget: data-ref is missing on the <script> tag');
    return;
  }
  const url = new URL(`/book/${encodeURIComponent(refs[0])}`, origin);
  for (const ref of refs.slice(1)) url.searchParams.append('ref', ref);
  url.searchParams.set('channelKey', data.channel || 'RESOURCE_REFERENCE');
  if (data.product) url.searchParams.set('prdRef', data.product);
  if (data.lang) url.searchParams.set('lang', data.lang);
  if (data.week) url.searchParams.set('week', data.week);
  url.searchParams.set('embed', '1');

  const frame = document.createElement('iframe');
  frame.src = url.toString();
  frame.title = data.title || (data.lang === 'en' ? 'Book an appointment' : 'Termin buchen');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  // CSSOM writes, so a host page whose CSP forbids inline style attributes still works.
  frame.style.display = 'block';
  frame.style.width = '100%';
  frame.style.minHeight = '24rem';
  frame.style.border = '0';

  window.addEventListener('message', (event) => {
    if (event.origin !== origin || event.source !== frame.contentWindow) return;
    const message = event.data;
    if (message && message.type === 'booking-widget:height' && Number.isFinite(message.height)) frame.style.height = `${Math.ceil(message.height)}px`;
  });

  const target = data.target ? document.querySelector(data.target) : null;
  if (target) target.replaceChildren(frame);
  else script.after(frame);
})();
