// Building the page without innerHTML: every text from the server goes in as text, never markup.

/**
 * An element: `h('td', { class: 'n' }, 'text', child)`. Attributes starting with "on" are event
 * listeners; `false`/`null`/`undefined` attributes and children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === false || child === null || child === undefined) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A count with thousands separators. */
export function fmt(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '–';
}

/** A rate per second, one decimal under 10. */
export function fmtRate(r) {
  if (r === null || r === undefined) return '–';
  return r < 10 ? r.toFixed(1) : Math.round(r).toLocaleString('en-US');
}

/** A big number with its label: the "number that matters" tiles at the top of a page. */
export function tile(label, value, { alarm = false, id } = {}) {
  return h('div', { class: alarm ? 'tile alarm' : 'tile', id },
    h('div', { class: 'tile-value' }, value), h('div', { class: 'tile-label' }, label));
}

/** A table from column titles and rows of cells. */
export function table(headers, rows, attrs = {}) {
  return h('table', attrs,
    h('thead', {}, h('tr', {}, headers.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'Nothing here.'))
      : rows));
}

/** A labelled form field. */
export function field(label, input) {
  return h('label', { class: 'field' }, h('span', {}, label), input);
}

/** A button that asks once more in place before acting (no browser dialogs). */
export function confirmButton(text, confirmText, action, attrs = {}) {
  const button = h('button', { type: 'button', class: 'danger', ...attrs }, text);
  let armed = false;
  button.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      button.textContent = confirmText;
      button.classList.add('armed');
      return;
    }
    armed = false;
    button.textContent = text;
    button.classList.remove('armed');
    await action();
  });
  return button;
}
