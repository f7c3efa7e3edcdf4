import { describe, expect, it } from 'vitest';
import { LongPolls } from '../src/long-polls.js';

describe('LongPolls', () => {
  it('aborts every waiting receive on shutdown, and later ones at once', () => {
    const shutdown = new AbortController();
    const polls = new LongPolls(shutdown.signal);
    const waiting = new AbortController();
    const finished = new AbortController();
    polls.begin(waiting, 'a');
    polls.begin(finished, 'a');
    polls.end(finished, 'a');
    expect(polls.stopping).toBe(false);
    shutdown.abort();
    expect(polls.stopping).toBe(true);
    expect(waiting.signal.aborted).toBe(true);
    expect(finished.signal.aborted).toBe(false);
    const late = new AbortController();
    polls.begin(late, 'a');
    expect(late.signal.aborted).toBe(true);
  });

  it('starts stopped when the signal is already aborted, and never stops without one', () => {
    expect(new LongPolls(AbortSignal.abort()).stopping).toBe(true);
    const polls = new LongPolls(undefined);
    const controller = new AbortController();
    polls.begin(controller, undefined);
    expect(controller.signal.aborted).toBe(false);
  });

  it('holds at most perAccountMax receives per account, answering 429 past it', () => {
    const polls = new LongPolls(undefined, 2);
    const held = [new AbortController(), new AbortController()];
    for (const controller of held) polls.begin(controller, 'busy');
    expect(() => polls.begin(new AbortController(), 'busy')).toThrow(
      expect.objectContaining({ kind: 'rate_limited', status: 429 }),
    );
    // Other accounts are not affected; a finished receive makes room again.
    polls.begin(new AbortController(), 'quiet');
    polls.end(held[0]!, 'busy');
    polls.begin(new AbortController(), 'busy');
  });
});
