// #/queue/NAME: one queue. Failures first (the thing to act on at night), then the message
// browser, a test send, settings and delete. Lists refresh when asked or after an action only.

import { call, enc, json } from './api.js';
import { confirmButton, field, fmt, fmtRate, h, replace, table, tile } from './dom.js';
import { charts, updatedLine } from './public-pages.js';
import { BulkAction } from './redrive.js';

const LIST_PAGE = 20;

/** Seconds as the largest two units: 45 s, 3 min 20 s, 2 h 5 min. */
export function fmtAge(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function hexDump(bytes) {
  const lines = [];
  for (let offset = 0; offset < bytes.length; offset += 16) {
    const row = [...bytes.subarray(offset, offset + 16)];
    const hex = row.map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const text = row.map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${text}`);
  }
  return lines.join('\n');
}

/** The payload shown as text, pretty JSON (when it parses) or hex. */
function payloadView(bytes, mode) {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (mode === 'hex') return hexDump(bytes);
  if (mode === 'json') {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return '(not JSON)';
    }
  }
  return text;
}

async function peekInto(ctx, handle, box) {
  const response = await call(ctx.credential, 'POST', `/v1/spools/${enc(ctx.spool)}/peek`, {
    headers: { 'svc-handle': handle },
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const pre = h('pre', { class: 'payload', id: 'payload' });
  const show = (mode) => { pre.textContent = payloadView(bytes, mode); };
  const modes = ['text', 'json', 'hex'].map((mode) =>
    h('button', { type: 'button', class: 'link', onclick: () => show(mode) }, mode));
  replace(box, h('div', { class: 'peek-head' },
    `Message ${response.headers.get('svc-message-id')} · state `,
    h('strong', {}, response.headers.get('svc-message-state') ?? '?'),
    ` · retries ${response.headers.get('svc-retry-count') ?? '?'}`,
    ` · ${bytes.length} bytes · view `,
    modes), pre);
  show('text');
}

function messageRows(ctx, items, peekBox, refresh, failedActions) {
  return items.map((m) => {
    const base = `/v1/spools/${enc(ctx.spool)}`;
    const act = (what, done) => ctx.act(done, async () => {
      const headers = { 'svc-handle': m.handle };
      await call(ctx.credential, 'POST', `${base}/${what}`, { headers });
      await refresh();
    });
    return h('tr', {},
      h('td', { class: 'mono' }, m.id), h('td', {}, m.state), h('td', { class: 'n' }, m.retries),
      h('td', {}, new Date(m.createdAt).toLocaleString()),
      h('td', { class: 'actions' },
        h('button', { type: 'button', class: 'link',
          onclick: () => ctx.act(null, () => peekInto(ctx, m.handle, peekBox)) }, 'Peek'),
        failedActions && h('button', { type: 'button', onclick: () => act('recover',
          `Message ${m.id} recovered.`) }, 'Recover'),
        failedActions && confirmButton('Discard', 'Really discard?', () => act('discard',
          `Message ${m.id} discarded.`))));
  });
}

/** A paged listing of one state (or all) with peek, and recover/discard on failed ones. */
function messageList(ctx, queue, fixedState, id) {
  const box = h('div', { id });
  const peekBox = h('div', { class: 'peek' });
  const select = fixedState === undefined ? h('select', { name: 'state' },
    h('option', { value: '' }, 'any state'),
    ['visible', 'pending', 'delayed', 'failed', 'unavailable'].map((s) =>
      h('option', { value: s }, s))) : null;
  const cursors = [undefined];
  const load = async () => {
    const state = fixedState ?? select.value;
    const after = cursors.at(-1);
    const query = new URLSearchParams({ limit: String(LIST_PAGE), handle: 'true' });
    if (state !== '') query.set('state', state);
    if (after !== undefined) query.set('after', after);
    const path = `/v1/spools/${enc(ctx.spool)}/queues/${enc(queue)}/messages?${query}`;
    const page = await json(ctx.credential, 'GET', path);
    const rows = messageRows(ctx, page.items, peekBox, load, (fixedState ?? state) === 'failed');
    const next = page.next === undefined ? null : h('button', { type: 'button', class: 'link',
      onclick: () => { cursors.push(page.next); void ctx.act(null, load); } }, 'Next page →');
    const first = cursors.length > 1 ? h('button', { type: 'button', class: 'link',
      onclick: () => { cursors.length = 1; void ctx.act(null, load); } }, '← First page') : null;
    replace(box, table(['Id', 'State', 'Retries', 'Sent', ''], rows, { class: 'data' }),
      h('div', { class: 'pager' }, first, next));
  };
  const reload = () => { cursors.length = 1; return ctx.act(null, load); };
  select?.addEventListener('change', () => void reload());
  const controls = h('div', { class: 'row' }, select,
    h('button', { type: 'button', onclick: () => void reload() }, 'Refresh list'));
  void reload();
  return { el: h('div', {}, controls, box, peekBox), reload };
}

function bulkControls(ctx, queue, afterRun) {
  // Shown once a run starts: an empty bar would look like something in progress.
  const progress = h('progress', { max: 1, value: 0, id: 'redrive-progress', hidden: true });
  const status = h('span', { id: 'redrive-status', class: 'small' });
  const stop = h('button', { type: 'button', hidden: true }, 'Stop');
  const resume = h('button', { type: 'button', hidden: true }, 'Resume');
  let running = null;
  const onProgress = (p) => {
    progress.hidden = false;
    progress.max = Math.max(1, p.total);
    progress.value = p.done + p.skipped;
    const verb = running.action === 'recover' ? 'Recovered' : 'Discarded';
    status.textContent = `${verb} ${p.done} of ${p.total}` +
      (p.skipped > 0 ? ` (${p.skipped} already moved)` : '') +
      (p.error === null ? '' : ` · stopped: ${p.error}`) + (p.running ? '…' : '');
    stop.hidden = !p.running;
    // After an error too: Resume retries from where the run stopped.
    resume.hidden = p.running || p.done + p.skipped >= p.total;
    if (!p.running) void afterRun();
  };
  const begin = (action) => {
    running = new BulkAction(ctx.credential, ctx.spool, queue, action, onProgress);
    void running.start();
  };
  stop.addEventListener('click', () => running?.stop());
  resume.addEventListener('click', () => void running?.start());
  return h('div', { class: 'bulk' },
    h('button', { type: 'button', id: 'recover-all', class: 'primary',
      onclick: () => begin('recover') }, 'Recover all'),
    confirmButton('Discard all', 'Really discard all failed?', async () => begin('discard'),
      { id: 'discard-all' }),
    stop, resume, progress, status);
}

function sendForm(ctx, queue, afterSend) {
  const body = h('textarea', { name: 'body', rows: 3 }, '{"test": true}');
  const delay = h('input', { name: 'delay', type: 'number', min: 0, value: 0 });
  const form = h('form', { class: 'inline-form', id: 'send-form' }, field('Payload', body),
    field('Delay (s)', delay), h('button', { type: 'submit' }, 'Send test message'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void ctx.act('Message sent.', async () => {
      const headers = { 'content-type': 'application/octet-stream' };
      if (Number(delay.value) > 0) headers['svc-delay-seconds'] = String(Number(delay.value));
      const path = `/v1/spools/${enc(ctx.spool)}/queues/${enc(queue)}/send`;
      const response = await call(ctx.credential, 'POST', path, { headers, body: body.value });
      await afterSend();
      return response.headers.get('svc-message-id');
    });
  });
  return form;
}

function settingsForm(ctx, queue, settings) {
  const inputs = [['leaseTimeoutSeconds', 'Lease timeout (s)'], ['maxRetries', 'Max retries'],
    ['retentionSeconds', 'Retention (s)'], ['dedupWindowSeconds', 'Dedup window (s)']];
  const form = h('form', { class: 'inline-form', id: 'settings-form' },
    inputs.map(([name, label]) => field(label, h('input', { name, type: 'number', min: 0,
      value: settings[name] }))),
    h('button', { type: 'submit' }, 'Save settings'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const patch = {};
    for (const [name] of inputs) {
      const value = Number(form.elements[name].value);
      if (value !== settings[name]) patch[name] = value;
    }
    const path = `/v1/spools/${enc(ctx.spool)}/queues/${enc(queue)}`;
    void ctx.act('Settings saved.', () => json(ctx.credential, 'PATCH', path, patch));
  });
  return form;
}

function deleteControls(ctx, sampler, queue) {
  const mode = h('select', { name: 'mode' },
    h('option', { value: 'drain' }, 'drain (let consumers empty it)'),
    h('option', { value: 'force' }, 'force (delete every message now)'));
  const path = () => `/v1/spools/${enc(ctx.spool)}/queues/${enc(queue)}?mode=${mode.value}`;
  return h('div', { class: 'row' }, mode, confirmButton('Delete queue', `Really delete ${queue}?`,
    () => ctx.act(`Queue ${queue} deleted (${mode.value}).`, async () => {
      await call(ctx.credential, 'DELETE', path());
      // Sampled before leaving, so the queues page does not show the deleted queue.
      sampler.focus = null;
      await sampler.sample();
      location.hash = '#/queues';
    }), { id: 'delete-queue' }));
}

function queueLive(sampler, queue, live) {
  const q = sampler.latest()?.queues.get(queue);
  if (q === undefined) {
    replace(live, h('p', { class: 'muted' }, sampler.error ?? 'No stats for this queue yet.'));
    return;
  }
  const s = q.stats;
  const failedRate = sampler.rate('failedTotal', queue);
  const latest = sampler.latest();
  const oldest = latest.oldest?.queue === queue ? latest.oldest.sentMs : undefined;
  const age = oldest === undefined ? '–' : oldest === null ? 'none'
    : fmtAge((latest.tMs - oldest) / 1000);
  replace(live, h('div', { class: 'tiles' },
    tile('failed', fmt(s.failed), { alarm: s.failed > 0, id: 'queue-failed' }),
    tile('oldest visible waited', age, { id: 'queue-oldest' }),
    tile('visible', fmt(s.visible), { id: 'queue-visible' }), tile('pending', fmt(s.pending)),
    tile('delayed', fmt(s.delayed)), tile('sent/s', fmtRate(sampler.rate('addedTotal', queue))),
    tile('acked/s', fmtRate(sampler.rate('ackedTotal', queue))),
    tile('failed/s', fmtRate(failedRate), { alarm: (failedRate ?? 0) > 0 })),
  updatedLine(sampler), charts(sampler, queue));
}

/** #/queue/NAME. */
export function queuePage(ctx, sampler, queue) {
  const live = h('div', { id: 'live' });
  const render = () => queueLive(sampler, queue, live);
  sampler.listeners.add(render);
  sampler.focus = queue;
  render();
  void sampler.sample();
  const failures = messageList(ctx, queue, 'failed', 'failures');
  const browser = messageList(ctx, queue, undefined, 'messages');
  const refreshAll = async () => {
    await sampler.sample();
    await failures.reload();
    await browser.reload();
  };
  const settingsBox = h('div', {});
  void ctx.act(null, async () => {
    const view = await json(ctx.credential, 'GET',
      `/v1/spools/${enc(ctx.spool)}/queues/${enc(queue)}`);
    replace(settingsBox, settingsForm(ctx, queue, view.settings));
  });
  const el = h('section', {},
    h('p', {}, h('a', { href: '#/queues' }, '← All queues')), h('h1', {}, `Queue ${queue}`), live,
    h('h2', {}, 'Failed messages'), bulkControls(ctx, queue, refreshAll),
    failures.el,
    h('h2', {}, 'Messages'), browser.el,
    h('h2', {}, 'Send a test message'), sendForm(ctx, queue, refreshAll),
    h('h2', {}, 'Settings'), settingsBox,
    h('h2', {}, 'Delete'), deleteControls(ctx, sampler, queue));
  const close = () => {
    sampler.listeners.delete(render);
    sampler.focus = null;
  };
  return { el, close };
}
