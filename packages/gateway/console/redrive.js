// Recover or discard the failed messages of a queue through the interface's own calls: list a
// page of failed messages with handles, then recover (or discard) each by its handle. Stoppable
// between messages and resumable; a handle answering 410 was moved by someone else meanwhile.
// A run is bounded by the failed count when it began: messages failing again while it runs (a
// consumer failing everything it gets) wait for the next run instead of looping forever.

import { ApiError, call, enc, json } from './api.js';

const PAGE = 100;

export class BulkAction {
  /**
   * `action` is 'recover' or 'discard'; `onProgress({ done, skipped, total, running, error })` is
   * called after every message and when the run ends.
   */
  constructor(credential, spool, queue, action, onProgress) {
    this.credential = credential;
    this.spool = spool;
    this.queue = queue;
    this.action = action;
    this.onProgress = onProgress;
    /** The failed count when the first start() began (null until then). */
    this.total = null;
    this.done = 0;
    this.skipped = 0;
    this.running = false;
    this.stopAsked = false;
    this.error = null;
  }

  report() {
    const { done, skipped, running, error } = this;
    const total = Math.max(this.total ?? 0, done + skipped);
    this.onProgress({ done, skipped, total, running, error });
  }

  finished() {
    return this.total !== null && this.done + this.skipped >= this.total;
  }

  stop() {
    this.stopAsked = true;
  }

  /** Runs until `total` messages are handled, none is left, stop() is called, or a call fails. */
  async start() {
    if (this.running) return;
    this.running = true;
    this.stopAsked = false;
    this.error = null;
    try {
      this.total ??= await this.failedCount();
      this.report();
      await this.run();
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
    } finally {
      this.running = false;
      this.report();
    }
  }

  async failedCount() {
    const path = `/v1/spools/${enc(this.spool)}/stats?queue=${enc(this.queue)}`;
    const page = await json(this.credential, 'GET', path);
    return page.queues.items[0]?.stats.failed ?? 0;
  }

  async run() {
    const base = `/v1/spools/${enc(this.spool)}`;
    const query = `state=failed&handle=true&limit=${PAGE}`;
    const list = `${base}/queues/${enc(this.queue)}/messages?${query}`;
    while (!this.stopAsked && !this.finished()) {
      const page = await json(this.credential, 'GET', list);
      if (page.items.length === 0) return;
      let moved = 0;
      for (const item of page.items) {
        if (this.stopAsked || this.finished()) return;
        try {
          await call(this.credential, 'POST', `${base}/${this.action}`, {
            headers: { 'svc-handle': item.handle },
          });
          this.done += 1;
          moved += 1;
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 410) throw error;
          this.skipped += 1;
        }
        this.report();
      }
      // A page where nothing moved would be listed again forever.
      if (moved === 0) return;
    }
  }
}
