// Calls to the API with the signed-in credential (an API key, or the admin token on the admin
// listener), kept in sessionStorage: gone when the tab closes, never in a URL.

const STORE = 'mq-console';

/** The error the API answered: status, kind and message as the interface renders them. */
export class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

/** What to tell someone whose credential was refused, by status. */
export function signInMessage(error, what) {
  if (!(error instanceof ApiError)) return `Could not reach the server: ${error.message}`;
  if (error.status === 401) {
    return `That ${what} is not recognized. Check that it was pasted whole, with no extra ` +
      'characters; keys are case-sensitive.';
  }
  if (error.status === 402) return 'This account is suspended.';
  if (error.status === 403) return `This ${what} is blocked, or its account is on hold.`;
  if (error.status === 404) return `Not found: ${error.message}`;
  return `${error.status} ${error.kind ?? ''}: ${error.message}`;
}

export function savedSession() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE) ?? 'null');
  } catch {
    return null;
  }
}

export function saveSession(session) {
  if (session === null) sessionStorage.removeItem(STORE);
  else sessionStorage.setItem(STORE, JSON.stringify(session));
}

async function errorOf(response) {
  let kind = null;
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = await response.json();
    kind = body.kind ?? null;
    message = body.message ?? message;
  } catch {
    // A body that is not JSON: keep the status text.
  }
  return new ApiError(response.status, kind, message);
}

/**
 * One call: resolves with the Response (2xx), rejects with an ApiError otherwise. `headers` are
 * added to the credential; `body` goes as is.
 */
export async function call(credential, method, path, { headers = {}, body } = {}) {
  const response = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...headers },
    body,
    cache: 'no-store',
  });
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** A call answering JSON (or nothing, as null). */
export async function json(credential, method, path, body) {
  const init = body === undefined ? {} : {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
  const response = await call(credential, method, path, init);
  if (response.status === 204) return null;
  const text = await response.text();
  return text === '' ? null : JSON.parse(text);
}

export const enc = encodeURIComponent;
