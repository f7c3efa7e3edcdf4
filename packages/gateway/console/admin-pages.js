// The pages the admin token sees on the admin listener: the cluster (spools without a primary
// first), accounts with their keys, and plans.

import { enc, json } from './api.js';
import { confirmButton, field, fmt, h, replace, table, tile } from './dom.js';

const A = '/admin/v1';

function ms(value) {
  return value === null || value === undefined ? '–' : `${Number(value).toFixed(1)} ms`;
}

/** #/cluster: members, each spool's primary, this member's Raft groups and fsync latency. */
export async function clusterPage(ctx) {
  const [cluster, status] = await Promise.all([
    json(ctx.credential, 'GET', `${A}/cluster`),
    json(ctx.credential, 'GET', `${A}/member-status`).catch(() => null),
  ]);
  const orphans = cluster.spools.filter((s) => s.primary === null);
  const maxLag = status === null ? null : Math.max(0, ...status.groups.map((g) => g.commitLag));
  const tiles = h('div', { class: 'tiles' },
    tile('spools without a primary', fmt(orphans.length), { alarm: orphans.length > 0,
      id: 'tile-orphans' }),
    tile('members', fmt(cluster.members.length)),
    tile('metadata leader', cluster.metaLeader ?? 'none', { alarm: cluster.metaLeader === null }),
    tile('fsync p99 (here)', status?.fsync?.p99UpToMs == null ? '–'
      : `≤ ${status.fsync.p99UpToMs} ms`),
    tile('largest commit lag (here)', fmt(maxLag)));
  const members = cluster.members.map((id) => h('tr', {}, h('td', {}, id),
    h('td', {}, id === cluster.metaLeader ? 'metadata leader' : ''),
    h('td', { class: 'n' }, fmt(cluster.spools.filter((s) => s.primary === id).length))));
  const ordered = [...orphans, ...cluster.spools.filter((s) => s.primary !== null)];
  const spools = ordered.map((s) => h('tr', {}, h('td', {}, s.account ?? ''), h('td', {}, s.name),
    h('td', { class: s.primary === null ? 'alarm-text' : '' }, s.primary ?? 'none'),
    h('td', {}, s.replicas.join(', '))));
  const groups = status === null ? [] : status.groups.map((g) => h('tr', {},
    h('td', {}, g.spool ?? 'metadata'), h('td', {}, g.role), h('td', { class: 'n' }, g.term),
    h('td', {}, g.leaderId ?? 'none'), h('td', { class: 'n' }, fmt(g.commitIndex)),
    h('td', { class: g.commitLag > 0 ? 'n warn-text' : 'n' }, fmt(g.commitLag))));
  const fsync = status?.fsync;
  return h('section', {}, h('h1', {}, 'Cluster'), tiles,
    h('h2', {}, 'Members'), table(['Member', 'Role', 'Primaries'], members,
      { class: 'data', id: 'members-table' }),
    h('h2', {}, 'Spools'), table(['Account', 'Spool', 'Primary', 'Replicas'], spools,
      { class: 'data', id: 'spools-table' }),
    h('h2', {}, `Raft groups on ${status?.id ?? 'this member'}`),
    table(['Group', 'Role', 'Term', 'Leader', 'Commit', 'Lag (unapplied)'], groups,
      { class: 'data' }),
    fsync == null ? null : h('p', { class: 'small' }, `fsync: ${fmt(fsync.count)} batches, mean `,
      ms(fsync.meanMs), ', max ', ms(fsync.maxMs)));
}

function keyRows(ctx, account, rerender) {
  return account.keys.map((key) => h('tr', {}, h('td', { class: 'mono' }, key.id),
    h('td', {}, key.blocked ? h('span', { class: 'alarm-text' }, 'blocked') : 'active'),
    h('td', { class: 'actions' },
      h('button', { type: 'button', onclick: () => ctx.act(key.blocked ? 'Key unblocked.' :
        'Key blocked.', async () => {
        await json(ctx.credential, 'PATCH', `${A}/keys/${enc(key.id)}`, { blocked: !key.blocked });
        await rerender();
      }) }, key.blocked ? 'Unblock' : 'Block'),
      confirmButton('Revoke', 'Really revoke?', () => ctx.act('Key revoked.', async () => {
        await json(ctx.credential, 'DELETE', `${A}/keys/${enc(key.id)}`);
        await rerender();
      })))));
}

/** #/account/ID: state, plan, spools and keys of one account. */
export async function accountPage(ctx, id, container) {
  const rerender = async () => replace(container, await accountPage(ctx, id, container));
  const account = await json(ctx.credential, 'GET', `${A}/accounts/${enc(id)}`);
  const newKey = h('div', { id: 'new-key' });
  const state = h('select', { name: 'state' }, ['active', 'suspended', 'blocked'].map((s) =>
    h('option', { value: s, selected: s === account.state }, s)));
  const plan = h('input', { name: 'plan', value: account.plan });
  const save = h('button', { type: 'button', onclick: () => ctx.act('Account saved.', async () => {
    await json(ctx.credential, 'PATCH', `${A}/accounts/${enc(id)}`,
      { state: state.value, plan: plan.value });
    await rerender();
  }) }, 'Save');
  const createKey = h('button', { type: 'button', id: 'create-key', onclick: () => ctx.act(null,
    async () => {
      const key = await json(ctx.credential, 'POST', `${A}/accounts/${enc(id)}/keys`);
      await rerender();
      replace(container.querySelector('#new-key'), h('p', {}, 'New key (shown only now; copy it):'),
        h('pre', { class: 'secret' }, key.key));
    }) }, 'Create a key');
  return h('section', {}, h('p', {}, h('a', { href: '#/accounts' }, '← All accounts')),
    h('h1', {}, `Account ${account.id}`),
    h('div', { class: 'row' }, field('State', state), field('Plan', plan), save),
    h('p', {}, `Spools: ${account.spools.join(', ') || 'none'}`),
    h('h2', {}, 'Keys'), table(['Key id', 'State', ''], keyRows(ctx, account, rerender),
      { class: 'data', id: 'keys-table' }), createKey, newKey);
}

/** #/accounts: every account; create one. */
export async function accountsPage(ctx) {
  const accounts = (await json(ctx.credential, 'GET', `${A}/accounts`)).items;
  const rows = accounts.map((a) => h('tr', {},
    h('td', {}, h('a', { href: `#/account/${enc(a.id)}` }, a.id)),
    h('td', { class: a.state === 'active' ? '' : 'alarm-text' }, a.state), h('td', {}, a.plan),
    h('td', {}, a.spools.join(', ')), h('td', { class: 'n' }, a.keys.length)));
  const id = h('input', { name: 'id', required: true, placeholder: 'acme' });
  const plan = h('input', { name: 'plan', placeholder: 'default' });
  const form = h('form', { class: 'inline-form', id: 'create-account' }, field('Account id', id),
    field('Plan', plan), h('button', { type: 'submit' }, 'Create account'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void ctx.act(`Account ${id.value} created.`, async () => {
      const body = plan.value === '' ? { id: id.value } : { id: id.value, plan: plan.value };
      await json(ctx.credential, 'POST', `${A}/accounts`, body);
      location.hash = `#/account/${enc(id.value)}`;
    });
  });
  return h('section', {}, h('h1', {}, 'Accounts'),
    table(['Account', 'State', 'Plan', 'Spools', 'Keys'], rows, { class: 'data',
      id: 'accounts-table' }),
    h('details', {}, h('summary', {}, 'Create an account'), form));
}

/** #/plans: every plan's limits. */
export async function plansPage(ctx) {
  const plans = await json(ctx.credential, 'GET', `${A}/plans`);
  const fields = [...new Set(Object.values(plans).flatMap((p) => Object.keys(p)))];
  const rows = Object.entries(plans).map(([name, plan]) => h('tr', {}, h('td', {}, name),
    fields.map((f) => h('td', { class: 'n' }, fmt(plan[f])))));
  return h('section', {}, h('h1', {}, 'Plans'),
    table(['Plan', ...fields], rows, { class: 'data', id: 'plans-table' }),
    h('p', { class: 'muted small' },
      'Plans change through PUT /admin/v1/plans/NAME (see docs/console.md).'));
}
