// Send and ack-and-send: the operations with a raw payload body. Everything about the request
// is judged from its headers first (Svc-*, query, Content-Length against the size limit), and
// only then is the body read, exactly Content-Length bytes, so a refused request costs no body.

import type { SendRequest, SendResult } from '@spoolmq/engine';
import { declaredPayloadBytes, readBody } from '../body.js';
import { dedupKeyFrom } from '../dedup.js';
import { pathQueue, type GatewayRequest, type Operation } from '../operation.js';
import { booleanParam, delayDurationMs, delaySecondsMs, requiredToken } from '../params.js';
import { SVC, type RequestHeaders } from '../request-headers.js';
import { emptyResponse } from '../responses.js';
import { checkName } from '../scalars.js';
import { invalidArgument } from '@spoolmq/engine';

/** A send as validated from headers, before its body is read. */
interface PayloadPlan {
  readonly delayMs: number;
  readonly dedupKey: Uint8Array | undefined;
  readonly wantHandle: boolean;
  readonly lengthBytes: number;
}

interface AckAndSendPlan extends PayloadPlan {
  readonly lease: string;
  readonly queue: string;
}

function planPayload(request: GatewayRequest, delayMs: number): PayloadPlan {
  const { headers, query } = request;
  const wantHandle = booleanParam(query, 'handle', false);
  const dedupKey = dedupKeyFrom(headers.svc.get(SVC.dedupString), headers.svc.get(SVC.dedupHash));
  const lengthBytes = declaredPayloadBytes(
    headers.contentLength,
    headers.transferEncoding,
    request.messageSizeMaxBytes,
  );
  return { delayMs, dedupKey, wantHandle, lengthBytes };
}

/** Reads the body (exactly the declared bytes) and builds the service's send request. */
async function sendRequestOf(request: GatewayRequest, plan: PayloadPlan): Promise<SendRequest> {
  const raw = request.c.req.raw;
  const limits = {
    exactBytes: plan.lengthBytes,
    maxBytes: plan.lengthBytes,
    budget: { budget: request.deps.bodyBudget, account: request.c.get('account') },
  };
  const clock = request.deps.options.clock;
  const payload = await readBody(request.c.env?.incoming, () => raw.body, limits, clock);
  const base = { payload, delayMs: plan.delayMs, wantHandle: plan.wantHandle };
  return plan.dedupKey === undefined ? base : { ...base, dedupKey: plan.dedupKey };
}

/** 201 with Svc-Message-Id (and Svc-Handle); a dedup hit is 200 with the original id. */
function sendResponse(result: SendResult): Response {
  const headers: Record<string, string> = { 'svc-message-id': result.messageId };
  if (result.duplicate) return emptyResponse(200, headers);
  if (result.handle !== undefined) headers['svc-handle'] = result.handle;
  return emptyResponse(201, headers);
}

export const send: Operation<PayloadPlan> = {
  name: 'send',
  svcHeaders: new Set([SVC.delaySeconds, SVC.dedupString, SVC.dedupHash]),
  query: { handle: 1 },
  scope: 'queue',
  parse: (request) => planPayload(request, delaySecondsMs(request.headers)),
  async run(request, plan) {
    const sendRequest = await sendRequestOf(request, plan);
    const result = await request.deps.service.send(request.spool, pathQueue(request), sendRequest);
    return sendResponse(result);
  },
};

function planAckAndSend(request: GatewayRequest, queue: string): AckAndSendPlan {
  const lease = requiredToken(request.headers, SVC.lease);
  const plan = planPayload(request, delayDurationMs(request.headers));
  return { ...plan, lease, queue };
}

async function runAckAndSend(request: GatewayRequest, plan: AckAndSendPlan): Promise<Response> {
  const sendRequest = await sendRequestOf(request, plan);
  const { service } = request.deps;
  const result = await service.ackAndSend(request.spool, plan.lease, plan.queue, sendRequest);
  return sendResponse(result);
}

const ACK_AND_SEND_HEADERS = [SVC.lease, SVC.delay, SVC.dedupString, SVC.dedupHash];

/** `POST /spools/{spool}/queues/{queue}/ack-and-send`: the path queue receives the new message. */
export const ackAndSendToPathQueue: Operation<AckAndSendPlan> = {
  name: 'ack_and_send',
  svcHeaders: new Set(ACK_AND_SEND_HEADERS),
  query: { handle: 1 },
  scope: 'queue',
  parse: (request) => planAckAndSend(request, pathQueue(request)),
  run: runAckAndSend,
};

function headerQueue(headers: RequestHeaders): string | undefined {
  return headers.svc.get(SVC.queue);
}

/** `POST /spools/{spool}/ack-and-send`: `Svc-Queue` names the queue receiving the new message. */
export const ackAndSendToHeaderQueue: Operation<AckAndSendPlan> = {
  name: 'ack_and_send',
  svcHeaders: new Set([...ACK_AND_SEND_HEADERS, SVC.queue]),
  query: { handle: 1 },
  scope: 'spool',
  headerQueue,
  parse(request) {
    const queue = headerQueue(request.headers);
    if (queue === undefined) throw invalidArgument('Svc-Queue', 'header Svc-Queue is required');
    return planAckAndSend(request, checkName('Svc-Queue', queue));
  },
  run: runAckAndSend,
};
