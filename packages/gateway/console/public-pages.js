// The pages an API key sees: its spool's queues (live depth, rates, last-hour charts), one
// queue (failures with bulk recover/discard, message browser, test send, settings, delete).

import { enc, json } from './api.js';
import { lineChart, WINDOW_MS, WINDOWS } from './charts.js';
import { field, fmt, fmtRate, h, replace, table, tile } from './dom.js';

/** How often the page samples the spool's stats (the charts' resolution). */
export const SAMPLE_MS = 15_000;
const SAMPLES_MAX = Math.ceil(WINDOW_MS / SAMPLE_MS) + 1;
/**
 * Shortest span a rate is computed over: samples taken on demand (Refresh now, an action) may be
 * a moment apart, and a delta over a moment would show a spike that means nothing.
 */
const RATE_SPAN_MS_MIN = 5_000;

/** Per-second rate between two [tMs, cumulative count] points, clamped at 0 (a restart). */
function perSecond(a, b) {
  return Math.max(0, b[1] - a[1]) / ((b[0] - a[0]) / 1000);
}

/** Rates over `points`, each against the latest point at least RATE_SPAN_MS_MIN older. */
export function ratePoints(points) {
  const out = [];
  let from = 0;
  for (let i = 1; i < points.length; i++) {
    while (from + 1 < i && points[i][0] - points[from + 1][0] >= RATE_SPAN_MS_MIN) from += 1;
    if (points[i][0] - points[from][0] >= RATE_SPAN_MS_MIN) {
      out.push([points[i][0], perSecond(points[from], points[i])]);
    }
  }
  return out;
}
const STATES = ['visible', 'pending', 'delayed', 'failed'];

/** Samples GET /stats of one spool; keeps the last hour. */
export class Sampler {
  constructor(ctx) {
    this.ctx = ctx;
    this.samples = [];
    this.listeners = new Set();
    this.timer = null;
    this.error = null;
    /** The queue whose page is open: its oldest visible message is sampled too. */
    this.focus = null;
    /** The charts' window (one of WINDOWS). */
    this.windowMs = WINDOW_MS;
  }

  setWindow(windowMs) {
    this.windowMs = windowMs;
    for (const listener of this.listeners) listener();
  }

  latest() {
    return this.samples.at(-1) ?? null;
  }

  start() {
    if (this.timer !== null) return;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }

  async sample() {
    const startedMs = Date.now();
    try {
      const path = `/v1/spools/${enc(this.ctx.spool)}/stats?limit=1000`;
      const page = await json(this.ctx.credential, 'GET', path);
      const queues = new Map(page.queues.items.map((q) => [q.name, q]));
      // The open queue may be gone (deleted): its age is then unknown, the sample still counts.
      const oldest = this.focus === null ? null
        : await this.oldestVisible(this.focus).catch(() => null);
      // A sample that started before the latest one kept would go back in time: dropped.
      if ((this.latest()?.tMs ?? 0) > startedMs) return;
      this.samples.push({ tMs: startedMs, rollup: page.stats, queues, oldest });
      if (this.samples.length > SAMPLES_MAX) this.samples.shift();
      this.error = null;
    } catch (error) {
      this.error = error.message;
    }
    for (const listener of this.listeners) listener();
  }

  /** When the first visible message of `queue` (in send order) was sent; null if none. */
  async oldestVisible(queue) {
    const path = `/v1/spools/${enc(this.ctx.spool)}/queues/${enc(queue)}/messages` +
      '?state=visible&limit=1';
    const page = await json(this.ctx.credential, 'GET', path);
    const first = page.items[0];
    return { queue, sentMs: first === undefined ? null : Date.parse(first.createdAt) };
  }

  /** The latest per-second rate of `field` (of one queue, or the rollup); null: too few samples. */
  rate(field, queue) {
    return ratePoints(this.series(field, queue)).at(-1)?.[1] ?? null;
  }

  /** [[tMs, value]] of a queue's (or the rollup's) count over the samples. */
  series(field, queue) {
    const out = [];
    for (const s of this.samples) {
      const counts = queue === undefined ? s.rollup : s.queues.get(queue)?.stats;
      if (counts !== undefined) out.push([s.tMs, counts[field]]);
    }
    return out;
  }
}

function windowLabel(sampler) {
  return WINDOWS.find(([, ms]) => ms === sampler.windowMs)?.[0] ?? '';
}

/** Buttons choosing the charts' window; the chosen one is marked. */
export function windowToggle(sampler) {
  return h('span', { class: 'window-toggle' }, 'Charts: ', WINDOWS.map(([label, ms]) =>
    h('button', { type: 'button', class: ms === sampler.windowMs ? 'link chosen' : 'link',
      onclick: () => sampler.setWindow(ms) }, label)));
}

/** Messages by state and rates, side by side. */
export function charts(sampler, queue) {
  return h('div', { class: 'charts' }, depthChart(sampler, queue, 'Messages by state'),
    ratesChart(sampler, queue));
}

function depthChart(sampler, queue, title) {
  const series = STATES.map((state) => ({
    name: state, cls: `s-${state}`, points: sampler.series(state, queue),
  }));
  return lineChart(series, Date.now(), { title: `${title}, ${windowLabel(sampler)}`,
    windowMs: sampler.windowMs });
}

function ratesChart(sampler, queue) {
  const rates = [['addedTotal', 'sent/s', 's-visible'], ['ackedTotal', 'acked/s', 's-pending'],
    ['failedTotal', 'failed/s', 's-failed']];
  const series = rates.map(([fieldName, name, cls]) => {
    return { name, cls, points: ratePoints(sampler.series(fieldName, queue)) };
  });
  return lineChart(series, Date.now(), { title: `Rates per second, ${windowLabel(sampler)}`,
    windowMs: sampler.windowMs });
}

export function updatedLine(sampler) {
  const latest = sampler.latest();
  const when = latest === null ? 'never' : new Date(latest.tMs).toLocaleTimeString();
  return h('p', { class: 'muted small' }, `Sampled every ${SAMPLE_MS / 1000} s; last ${when}. `,
    sampler.error === null ? ''
      : h('span', { class: 'error' }, `Last sample failed: ${sampler.error}`),
    h('button', { type: 'button', class: 'link', onclick: () => void sampler.sample() },
      'Refresh now'), ' · ', windowToggle(sampler));
}

function queueRow(sampler, q) {
  const s = q.stats;
  const link = h('a', { href: `#/queue/${enc(q.name)}` }, q.name);
  return h('tr', { 'data-queue': q.name },
    h('td', {}, link, q.state === 'active' ? '' : h('span', { class: 'badge' }, q.state)),
    h('td', { class: s.failed > 0 ? 'n alarm-text' : 'n' }, fmt(s.failed)),
    h('td', { class: 'n' }, fmt(s.visible)),
    h('td', { class: 'n' }, fmt(s.pending)),
    h('td', { class: 'n' }, fmt(s.delayed)),
    h('td', { class: 'n' }, fmtRate(sampler.rate('addedTotal', q.name))),
    h('td', { class: 'n' }, fmtRate(sampler.rate('ackedTotal', q.name))),
    h('td', { class: 'n' }, fmtRate(sampler.rate('failedTotal', q.name))));
}

function queuesLive(ctx, sampler, live) {
  const latest = sampler.latest();
  if (latest === null) {
    replace(live, h('p', { class: 'muted' }, sampler.error ?? 'Loading…'));
    return;
  }
  const r = latest.rollup;
  const tiles = h('div', { class: 'tiles' },
    tile('failed', fmt(r.failed), { alarm: r.failed > 0, id: 'tile-failed' }),
    tile('visible (waiting)', fmt(r.visible)), tile('pending (leased)', fmt(r.pending)),
    tile('delayed', fmt(r.delayed)), tile('sent/s', fmtRate(sampler.rate('addedTotal'))),
    tile('acked/s', fmtRate(sampler.rate('ackedTotal'))));
  const rows = [...latest.queues.values()].map((q) => queueRow(sampler, q));
  const headers = ['Queue', 'Failed', 'Visible', 'Pending', 'Delayed', 'Sent/s', 'Acked/s',
    'Failed/s'];
  replace(live, tiles, updatedLine(sampler),
    table(headers, rows, { id: 'queues-table', class: 'data' }),
    charts(sampler, undefined));
}

function settingsInputs(settings = {}) {
  const num = (name, value) => h('input', { name, type: 'number', min: 0, value: value ?? '' });
  return [
    field('Lease timeout (s)', num('leaseTimeoutSeconds', settings.leaseTimeoutSeconds)),
    field('Max retries', num('maxRetries', settings.maxRetries)),
    field('Retention (s)', num('retentionSeconds', settings.retentionSeconds)),
    field('Dedup window (s)', num('dedupWindowSeconds', settings.dedupWindowSeconds)),
  ];
}

function settingsOf(form) {
  const out = {};
  for (const name of ['leaseTimeoutSeconds', 'maxRetries', 'retentionSeconds',
    'dedupWindowSeconds']) {
    const value = form.elements[name].value.trim();
    if (value !== '') out[name] = Number(value);
  }
  return out;
}

function createQueueForm(ctx, sampler) {
  const name = h('input', { name: 'name', required: true, pattern: '[A-Za-z0-9_:\\-]{1,63}',
    placeholder: 'orders' });
  const form = h('form', { class: 'inline-form', id: 'create-queue' },
    field('Name', name), settingsInputs(), h('button', { type: 'submit' }, 'Create queue'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const path = `/v1/spools/${enc(ctx.spool)}/queues/${enc(name.value)}`;
    await ctx.act(`Queue ${name.value} created.`, () => json(ctx.credential, 'PUT', path,
      settingsOf(form)));
    form.reset();
    await sampler.sample();
  });
  return h('details', {}, h('summary', {}, 'Create a queue'), form);
}

/** #/queues: every queue of the spool, the failed count first. */
export function queuesPage(ctx, sampler) {
  const live = h('div', { id: 'live' });
  const render = () => queuesLive(ctx, sampler, live);
  sampler.listeners.add(render);
  render();
  return {
    el: h('section', {}, h('h1', {}, `Spool ${ctx.spool}`), live, createQueueForm(ctx, sampler)),
    close: () => sampler.listeners.delete(render),
  };
}

