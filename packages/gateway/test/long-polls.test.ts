import { describe, expect, it } from 'vitest';
import { LongPolls } from '../src/long-polls.js';

describe('LongPolls', () => {
  it('aborts every waiting receive on shutdown, and later ones at once', () => {
    const shutdown = new AbortController();
    const polls = new LongPolls(shutdown.signal);
    const waiting = new AbortController();
    const finished = new AbortController();
    polls.begin(waiting);
    polls.begin(finished);
    polls.end(finished);
    expect(polls.stopping).toBe(false);
    shutdown.abort();
    expect(polls.stopping).toBe(true);
    expect(waiting.signal.aborted).toBe(true);
    expect(finished.signal.aborted).toBe(false);
    const late = new AbortController();
    polls.begin(late);
    expect(late.signal.aborted).toBe(true);
  });

  it('starts stopped when the signal is already aborted, and never stops without one', () => {
    expect(new LongPolls(AbortSignal.abort()).stopping).toBe(true);
    const polls = new LongPolls(undefined);
    const controller = new AbortController();
    polls.begin(controller);
    expect(controller.signal.aborted).toBe(false);
  });
});
