// The console's entry: sign in (an API key on the public listener, the admin token on the admin
// listener), then a page per hash route. No framework; see public-pages.js and admin-pages.js.

import { ApiError, enc, json, savedSession, saveSession, signInMessage } from './api.js';
import { accountPage, accountsPage, clusterPage, plansPage } from './admin-pages.js';
import { h, replace } from './dom.js';
import { queuesPage, Sampler } from './public-pages.js';
import { queuePage } from './queue-page.js';

const main = document.getElementById('main');
const banner = document.getElementById('banner');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let current = null;
let sampler = null;

function say(text, isError) {
  banner.hidden = text === null;
  banner.className = isError ? 'banner error' : 'banner ok';
  banner.textContent = text ?? '';
}

function makeContext(listener, session) {
  return {
    listener,
    credential: session.credential,
    spool: session.spool,
    /** Runs `fn`, then says `done` (with fn's result when a string), or the error. */
    async act(done, fn) {
      try {
        const result = await fn();
        if (done !== null) say(typeof result === 'string' ? `${done} (${result})` : done, false);
        return result;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return signOut(listener, error);
        say(error instanceof ApiError ? `${error.status} ${error.kind ?? ''}: ${error.message}`
          : String(error.message ?? error), true);
        return undefined;
      }
    },
  };
}

function signOut(listener, error) {
  saveSession(null);
  sampler?.stop();
  sampler = null;
  signInPage(listener, error === undefined ? null : signInMessage(error, 'credential'));
}

function signInPage(listener, message) {
  const admin = listener === 'admin';
  const what = admin ? 'admin token' : 'API key';
  replace(nav);
  replace(who);
  const credential = h('input', { id: 'credential', type: 'password', required: true,
    autocomplete: 'off', placeholder: what });
  const spool = admin ? null : h('input', { id: 'spool', value: 'default', required: true });
  const error = h('p', { id: 'sign-in-error', class: 'error', role: 'alert' }, message ?? '');
  const form = h('form', { id: 'sign-in', class: 'sign-in' }, h('h1', {}, 'Sign in'),
    h('label', { class: 'field' }, h('span', {}, admin ? 'Admin token' : 'API key'), credential),
    spool && h('label', { class: 'field' }, h('span', {}, 'Spool'), spool),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'), error,
    h('p', { class: 'muted small' }, admin
      ? 'The token is in the data directory\'s admin-token file (or MQ_ADMIN_TOKEN).'
      : 'Kept in this tab only (sessionStorage) and sent as a Bearer header.'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const session = { listener, credential: credential.value.trim(), spool: spool?.value ?? null };
    try {
      const path = admin ? '/admin/v1/cluster' : `/v1/spools/${enc(session.spool)}`;
      await json(session.credential, 'GET', path);
    } catch (e) {
      error.textContent = signInMessage(e, what);
      return;
    }
    saveSession(session);
    location.hash = admin ? '#/cluster' : '#/queues';
    start(listener, session);
  });
  say(null);
  replace(main, form);
  credential.focus();
}

function navLinks(listener) {
  const links = listener === 'admin'
    ? [['#/cluster', 'Cluster'], ['#/accounts', 'Accounts'], ['#/plans', 'Plans']]
    : [['#/queues', 'Queues']];
  return links.map(([href, text]) => h('a', { href }, text));
}

async function route(ctx) {
  current?.close?.();
  current = null;
  say(null);
  const [, page = '', arg] = location.hash.split('/');
  const name = arg === undefined ? undefined : decodeURIComponent(arg);
  if (ctx.listener === 'public') {
    if (page === 'queue' && name !== undefined) current = queuePage(ctx, sampler, name);
    else current = queuesPage(ctx, sampler);
    replace(main, current.el);
    return;
  }
  const container = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  replace(main, container);
  const build = page === 'accounts' ? () => accountsPage(ctx)
    : page === 'account' && name !== undefined ? () => accountPage(ctx, name, container)
      : page === 'plans' ? () => plansPage(ctx) : () => clusterPage(ctx);
  const el = await ctx.act(null, build);
  if (el !== undefined) replace(container, el);
}

function start(listener, session) {
  const ctx = makeContext(listener, session);
  replace(nav, navLinks(listener));
  replace(who, listener === 'admin' ? 'admin' : `spool ${session.spool}`, ' ',
    h('button', { type: 'button', class: 'link', id: 'sign-out',
      onclick: () => signOut(listener) }, 'Sign out'));
  if (listener === 'public') {
    sampler = new Sampler(ctx);
    sampler.start();
  }
  window.onhashchange = () => void route(ctx);
  void route(ctx);
}

async function boot() {
  const config = await (await fetch('config.json', { cache: 'no-store' })).json();
  const listener = config.listener === 'admin' ? 'admin' : 'public';
  document.body.dataset.listener = listener;
  const session = savedSession();
  if (session !== null && session.listener === listener) start(listener, session);
  else signInPage(listener, null);
}

void boot();
