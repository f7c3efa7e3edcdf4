// Spool-level reads: describe a spool, its stats rollup with a page of queues, and the queue
// listing. All JSON out; listings validate `limit`, `after` and `match` here and leave the
// cursor's meaning and the filtering to the service.

import type { ListQuery, StatsQuery } from '@spoolmq/engine';
import type { Operation } from '../operation.js';
import { afterParam, limitParam } from '../params.js';
import type { Query } from '../query.js';
import { jsonResponse } from '../responses.js';
import { checkName } from '../scalars.js';
import { STATS_QUEUE_PARAMS_MAX } from '../options.js';
import type { MatchGuard } from '../match-guard.js';
import { pageJson, queueJson, spoolJson, statsPageJson } from '../views.js';

const NO_HEADERS: ReadonlySet<string> = new Set();

/** limit, after and match of a listing; an empty `match` means no filter. */
async function listQueryOf(
  query: Query,
  matchGuard: MatchGuard,
  account: string | undefined,
): Promise<ListQuery> {
  const limit = limitParam(query);
  const after = afterParam(query);
  const match = query.one('match');
  if (match === undefined || match.length === 0) return { limit, after };
  await matchGuard.check(match, account);
  return { limit, after, match };
}

export const describeSpool: Operation<void> = {
  name: 'describe_spool',
  svcHeaders: NO_HEADERS,
  query: {},
  scope: 'spool',
  parse: () => undefined,
  async run(request) {
    const spool = await request.deps.service.describeSpool(request.spool);
    return jsonResponse(200, spoolJson({ ...spool, name: request.publicSpool }));
  },
};

export const spoolStats: Operation<StatsQuery> = {
  name: 'spool_stats',
  svcHeaders: NO_HEADERS,
  query: { limit: 1, after: 1, match: 1, queue: STATS_QUEUE_PARAMS_MAX },
  scope: 'spool',
  async parse(request) {
    const names = request.query.many('queue').map((name) => checkName('queue', name));
    const account = request.c.get('account');
    const list = await listQueryOf(request.query, request.deps.matchGuard, account);
    return names.length === 0 ? list : { ...list, queues: names };
  },
  async run(request, query) {
    const page = await request.deps.service.spoolStats(request.spool, query);
    return jsonResponse(200, statsPageJson(page));
  },
};

export const listQueues: Operation<ListQuery> = {
  name: 'list_queues',
  svcHeaders: NO_HEADERS,
  query: { limit: 1, after: 1, match: 1 },
  scope: 'spool',
  parse: (request) => listQueryOf(request.query, request.deps.matchGuard, request.c.get('account')),
  async run(request, query) {
    const page = await request.deps.service.listQueues(request.spool, query);
    return jsonResponse(200, pageJson(page, queueJson));
  },
};
