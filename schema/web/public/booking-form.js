// The consumer form of the booking page: its fields, with the spec's limits, and their checks.
import { h } from './booking-dom.js';

/** The server's limits (create_appointment_with_consumer): names 255, e-mail 320, message 1024 characters. */
export const LIMITS = { name: 255, email: 320, mobile: 64, message: 1024 };

const fieldsOf = (t) => [
  { name: 'firstname', label: t.firstname, type: 'text', autocomplete: 'given-name', required: true, max: LIMITS.name },
  { name: 'lastname', label: t.lastname, type: 'text', autocomplete: 'family-name', required: true, max: LIMITS.name },
  { name: 'email', label: t.email, type: 'email', autocomplete: 'email', required: true, max: LIMITS.email },
  { name: 'mobile', label: t.mobile, type: 'tel', autocomplete: 'tel', required: false, max: LIMITS.mobile },
  { name: 'message', label: t.message, type: 'textarea', required: false, max: LIMITS.message },
];

/** The labelled fields; each has an error paragraph its control names in aria-describedby. */
export const consumerFields = (t) => fieldsOf(t).map((spec) => field(spec, t));

function field(spec, t) {
  const id = `field-${spec.name}`;
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const common = { id, name: spec.name, maxlength: spec.max, required: spec.required, 'aria-describedby': spec.name === 'message' ? `${hintId} ${errorId}` : errorId };
  const control = spec.type === 'textarea' ? h('textarea', { ...common, rows: 4 }) : h('input', { ...common, type: spec.type, autocomplete: spec.autocomplete, spellcheck: spec.type === 'text' ? null : 'false' });
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, spec.label, spec.required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    spec.name === 'message' ? h('p', { id: hintId, class: 'hint' }, t.messageHint(LIMITS.message)) : null,
    control,
    h('p', { id: errorId, class: 'field-error', hidden: true }),
  );
}

/** Checks every field as the server will (roughly, for the mobile: the server reads it with libphonenumber); returns the names of the bad ones. */
export function validateConsumer(form, t) {
  const problems = [];
  for (const spec of fieldsOf(t)) {
    const control = form.elements.namedItem(spec.name);
    const value = control.value.trim();
    let problem = null;
    if (spec.required && !value) problem = t.invalid[spec.name];
    else if (value.length > spec.max) problem = spec.name === 'message' ? t.invalid.message(spec.max) : t.invalid.tooLong(spec.max);
    else if (spec.name === 'email' && value && (!control.checkValidity() || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value))) problem = t.invalid.email;
    else if (spec.name === 'mobile' && value && !/^[+(]?[0-9][0-9 ()/.-]{3,}$/.test(value)) problem = t.invalid.mobile;
    setFieldError(form, spec.name, problem);
    if (problem) problems.push(spec.name);
  }
  return problems;
}

/** Shows (or clears, with null) a field's error: the text under it and aria-invalid on the control. */
export function setFieldError(form, name, problem) {
  const control = form.elements.namedItem(name);
  const error = document.getElementById(`field-${name}-error`);
  error.textContent = problem ?? '';
  error.hidden = !problem;
  if (problem) control.setAttribute('aria-invalid', 'true');
  else control.removeAttribute('aria-invalid');
}
