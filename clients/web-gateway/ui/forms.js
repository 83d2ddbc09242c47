// Forms built from JSON Schemas: a tool's inputSchema, an elicitation's
// requestedSchema. Types, enums (enum, oneOf/anyOf of const, enumNames),
// required fields, defaults, nested objects, arrays, and a raw JSON
// escape hatch. Values are checked before they are sent.
import { h, uid } from './util.js';

function enumOptions(schema) {
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value, i) => ({
      value, label: (schema.enumNames && schema.enumNames[i]) || String(value),
    }));
  }
  const list = schema.oneOf || schema.anyOf;
  if (Array.isArray(list) && list.length && list.every((s) => s && 'const' in s)) {
    return list.map((s) => ({ value: s.const, label: s.title || String(s.const) }));
  }
  return null;
}

function typeOf(schema) {
  if (!schema || typeof schema !== 'object') return 'any';
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') || 'any';
  if (!type && schema.properties) type = 'object';
  if (!type && enumOptions(schema)) type = 'string';
  return type || 'any';
}

const INPUT_TYPES = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

// One control for `schema`; returns { element, read() -> {value, present}, errors(path) }.
function control(name, schema, required, initial) {
  const type = typeOf(schema);
  const id = uid('in');
  const title = schema.title || name;
  const label = h('label', { for: id }, title, required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null);
  const desc = schema.description ? h('div', { class: 'hint', id: `${id}-hint` }, schema.description) : null;
  const described = desc ? `${id}-hint` : null;
  const start = initial !== undefined ? initial : schema.default;
  const options = enumOptions(schema);
  let input;
  let read;

  if (type === 'object' && schema.properties) {
    const inner = objectFields(schema, start || {});
    const set = h('fieldset', { class: 'nested' }, h('legend', {}, title), desc, inner.element);
    return { element: set, read: () => ({ value: inner.read(), present: true }), validate: inner.validate, name };
  }
  if (type === 'array') {
    const itemOptions = enumOptions(schema.items || {});
    if (itemOptions) {
      const chosen = new Set(Array.isArray(start) ? start : []);
      const boxes = itemOptions.map((opt) => {
        const box = h('input', { type: 'checkbox', id: uid('cb'), checked: chosen.has(opt.value) });
        box.dataset.value = JSON.stringify(opt.value);
        return h('label', { class: 'check' }, box, ' ', opt.label);
      });
      const set = h('fieldset', { class: 'choices', id }, h('legend', {}, title, required ? ' *' : ''), desc, boxes);
      read = () => {
        const values = boxes.map((l) => l.querySelector('input')).filter((b) => b.checked).map((b) => JSON.parse(b.dataset.value));
        return { value: values, present: values.length > 0 };
      };
      return { element: set, read, validate: (v) => checkValue(schema, v, required, title), name, focus: set };
    }
    const itemType = typeOf(schema.items || {});
    if (itemType === 'string' || itemType === 'number' || itemType === 'integer') {
      input = h('textarea', { id, rows: 3, 'aria-describedby': described, placeholder: 'one value per line' },
        Array.isArray(start) ? start.join('\n') : '');
      read = () => {
        const lines = input.value.split('\n').map((l) => l.trim()).filter((l) => l !== '');
        const value = itemType === 'string' ? lines : lines.map(Number);
        return { value, present: lines.length > 0 };
      };
    }
  }
  if (!read && options) {
    input = h('select', { id, 'aria-describedby': described },
      h('option', { value: '' }, required ? '— choose —' : '(none)'),
      options.map((opt, i) => h('option', { value: String(i), selected: start !== undefined && opt.value === start }, opt.label)));
    read = () => (input.value === '' ? { present: false } : { value: options[Number(input.value)].value, present: true });
  } else if (!read && type === 'boolean') {
    input = h('input', { type: 'checkbox', id, checked: start === true, 'aria-describedby': described });
    const wrap = h('div', { class: 'field check-field' }, input, ' ', label, desc);
    return { element: wrap, read: () => ({ value: input.checked, present: true }), validate: () => null, name, focus: input };
  } else if (!read && (type === 'number' || type === 'integer')) {
    input = h('input', {
      type: 'number', id, step: type === 'integer' ? '1' : 'any', value: start !== undefined ? String(start) : '',
      min: schema.minimum, max: schema.maximum, 'aria-describedby': described,
    });
    read = () => (input.value.trim() === '' ? { present: false } : { value: Number(input.value), present: true });
  } else if (!read && type === 'string') {
    const multiline = (schema.maxLength || 0) > 200 || /text|body|content|prompt|message/i.test(name) && !schema.format;
    input = multiline
      ? h('textarea', { id, rows: 2, 'aria-describedby': described }, start !== undefined ? String(start) : '')
      : h('input', { type: INPUT_TYPES[schema.format] || 'text', id, value: start !== undefined ? String(start) : '', 'aria-describedby': described });
    read = () => (input.value === '' && !required ? { present: false } : { value: input.value, present: input.value !== '' });
  } else if (!read) {
    // Anything else (objects without properties, unions, arrays of objects): JSON.
    input = h('textarea', { id, rows: 3, class: 'mono', 'aria-describedby': described, placeholder: 'JSON' },
      start !== undefined ? JSON.stringify(start, null, 2) : '');
    read = () => {
      if (input.value.trim() === '') return { present: false };
      try {
        return { value: JSON.parse(input.value), present: true };
      } catch (error) {
        return { present: true, invalid: `not valid JSON: ${error.message}` };
      }
    };
  }
  if (required) input.setAttribute('aria-required', 'true');
  const element = h('div', { class: 'field' }, label, input, desc);
  return { element, read, validate: (v) => checkValue(schema, v, required, title), name, focus: input };
}

// The rules a value must follow; a message, or null when it is fine.
export function checkValue(schema, value, required, title = 'value') {
  if (value === undefined) return required ? `${title} is required` : null;
  const type = typeOf(schema);
  const options = enumOptions(schema);
  if (type === 'integer' && !Number.isInteger(value)) return `${title} must be a whole number`;
  if (type === 'number' && (typeof value !== 'number' || Number.isNaN(value))) return `${title} must be a number`;
  if ((type === 'number' || type === 'integer') && typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${title} must be at least ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${title} must be at most ${schema.maximum}`;
  }
  if (type === 'string' && typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) return `${title} needs at least ${schema.minLength} characters`;
    if (schema.maxLength !== undefined && value.length > schema.maxLength) return `${title} takes at most ${schema.maxLength} characters`;
    if (schema.pattern) {
      try {
        if (!new RegExp(schema.pattern, 'u').test(value)) return `${title} must match ${schema.pattern}`;
      } catch { /* a pattern the browser cannot read is not checked */ }
    }
    if (schema.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(value)) return `${title} must be an email address`;
    if (schema.format === 'uri' && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return `${title} must be a URI`;
  }
  if (options && type !== 'array' && !options.some((o) => o.value === value)) return `${title} must be one of the choices`;
  if (type === 'array' && Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return `${title}: choose at least ${schema.minItems}`;
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return `${title}: choose at most ${schema.maxItems}`;
  }
  return null;
}

function objectFields(schema, initial) {
  const required = new Set(schema.required || []);
  const controls = Object.entries(schema.properties || {}).map(
    ([name, sub]) => control(name, sub || {}, required.has(name), initial ? initial[name] : undefined));
  const element = h('div', { class: 'fields' }, controls.map((c) => c.element));
  const read = () => {
    const out = {};
    for (const c of controls) {
      const r = c.read();
      if (r.present && !r.invalid) out[c.name] = r.value;
    }
    return out;
  };
  const validate = () => {
    const errors = [];
    for (const c of controls) {
      const r = c.read();
      const message = r.invalid ? `${c.name}: ${r.invalid}` : c.validate(r.present ? r.value : undefined);
      const target = c.focus || c.element.querySelector('input,select,textarea');
      c.element.querySelector('.field-error')?.remove();
      if (target) target.removeAttribute('aria-invalid');
      if (message) {
        errors.push(message);
        if (target) target.setAttribute('aria-invalid', 'true');
        c.element.append(h('div', { class: 'field-error', role: 'alert' }, message));
      }
    }
    return errors;
  };
  return { element, read, validate, controls };
}

// The whole form for an object schema, with the raw JSON escape hatch.
// Returns { element, value() -> {ok, value, errors} }.
/**
 * @param {any} schema a JSON Schema (an object one, or anything: no fields)
 * @param {{initial?: object}} [options] the values to start with
 */
export function schemaForm(schema, { initial } = {}) {
  const objectSchema = schema && typeof schema === 'object' ? schema : { type: 'object' };
  let fields = objectFields(objectSchema, initial || {});
  const rawId = uid('raw');
  const raw = h('textarea', { id: rawId, class: 'mono', rows: 8, hidden: true, 'aria-label': 'Arguments as JSON' });
  const toggle = h('input', { type: 'checkbox', id: uid('rawtoggle') });
  const holder = h('div', {}, fields.element);
  toggle.addEventListener('change', () => {
    if (toggle.checked) {
      raw.value = JSON.stringify(fields.read(), null, 2);
      holder.hidden = true;
      raw.hidden = false;
    } else {
      try {
        fields = objectFields(objectSchema, JSON.parse(raw.value || '{}'));
        holder.replaceChildren(fields.element);
      } catch { /* keep the fields as they were */ }
      holder.hidden = false;
      raw.hidden = true;
    }
  });
  const noFields = Object.keys(objectSchema.properties || {}).length === 0;
  const element = h('div', { class: 'schema-form' },
    noFields ? h('p', { class: 'muted' }, 'No arguments.') : null,
    holder, raw,
    h('label', { class: 'check raw-toggle', for: toggle.id }, toggle, ' Edit as raw JSON'));
  const value = () => {
    if (toggle.checked) {
      try {
        const parsed = JSON.parse(raw.value || '{}');
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
          return { ok: false, errors: ['the arguments must be a JSON object'] };
        }
        return { ok: true, value: parsed, errors: [] };
      } catch (error) {
        return { ok: false, errors: [`not valid JSON: ${error.message}`] };
      }
    }
    const errors = fields.validate();
    return { ok: errors.length === 0, value: fields.read(), errors };
  };
  return { element, value };
}
