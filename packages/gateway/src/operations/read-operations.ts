// Reads that move nothing: peek (also served as inspect), the message listing and the head of
// the failure queue. Their answers name live messages, so none may be cached.

import type { MessageListQuery, MessageState } from '@spoolmq/engine';
import { pathQueue, type Operation } from '../operation.js';
import { afterParam, booleanParam, limitParam, requiredToken } from '../params.js';
import { SVC } from '../request-headers.js';
import { emptyResponse, jsonResponse, payloadResponse } from '../responses.js';
import { parseEnum } from '../scalars.js';
import { messageJson, pageJson } from '../views.js';

const NO_STORE = 'no-store';
const MESSAGE_STATES: readonly MessageState[] = [
  'delayed',
  'visible',
  'pending',
  'failed',
  'unavailable',
];

export const peek: Operation<string> = {
  name: 'peek',
  svcHeaders: new Set([SVC.handle]),
  query: {},
  scope: 'spool',
  parse: (request) => requiredToken(request.headers, SVC.handle),
  async run(request, handle) {
    const peeked = await request.deps.service.peek(request.spool, handle);
    return payloadResponse(peeked.payload, {
      'svc-message-id': peeked.messageId,
      'svc-message-state': peeked.state,
      'svc-retry-count': String(peeked.retries),
      'cache-control': NO_STORE,
    });
  },
};

export const listMessages: Operation<MessageListQuery> = {
  name: 'list_messages',
  svcHeaders: new Set(),
  query: { state: 1, limit: 1, after: 1, handle: 1 },
  scope: 'queue',
  parse(request) {
    const { query } = request;
    const stateText = query.one('state');
    const listQuery: MessageListQuery = {
      limit: limitParam(query),
      after: afterParam(query),
      withHandles: booleanParam(query, 'handle', false),
    };
    if (stateText === undefined) return listQuery;
    return { ...listQuery, state: parseEnum('state', stateText, MESSAGE_STATES) };
  },
  async run(request, query) {
    const page = await request.deps.service.listMessages(request.spool, pathQueue(request), query);
    return jsonResponse(200, pageJson(page, messageJson), { 'cache-control': NO_STORE });
  },
};

export const failureHead: Operation<void> = {
  name: 'failure_head',
  svcHeaders: new Set(),
  query: {},
  scope: 'queue',
  parse: () => undefined,
  async run(request) {
    const head = await request.deps.service.failureHead(request.spool, pathQueue(request));
    if (head === null) return emptyResponse(204, { 'cache-control': NO_STORE });
    return payloadResponse(head.payload, {
      'svc-lease': head.lease,
      'svc-message-id': head.messageId,
      'svc-retry-count': String(head.retries),
      'cache-control': NO_STORE,
    });
  },
};
