// Live changes of a conversation or an inbox: a loop of long-polls
// (`events?since=V&wait=30`) that hands each answer to `onEvents` and asks
// again from the answer's position.
//
// The screens see only `start()`, `stop()` and the callbacks, so a feed on
// the server's event streams (EventSource) can replace this one where the
// server has them, without touching the screens.

import { get, query } from "./api.js";

const WAIT_SECONDS = 30;

export class LongPollFeed {
  // url: the feed's path; position: the `since` to start from; field: the
  // answer's position field ("version" for a conversation, "activity" for
  // an inbox). onEvents(answer) may return a promise; onError(error)
  // decides: return "stop" to end the feed.
  constructor({ url, position, field, onEvents, onError, extra = {} }) {
    Object.assign(this, { url, position, field, onEvents, onError, extra });
    this.controller = null;
    this.running = false;
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.loop();
  }

  stop() {
    this.running = false;
    this.controller?.abort();
  }

  async loop() {
    let failures = 0;
    while (this.running) {
      this.controller = new AbortController();
      try {
        const answer = await get(this.url + query({ since: this.position, wait: WAIT_SECONDS, ...this.extra }),
          { signal: this.controller.signal });
        if (!this.running) return;
        failures = 0;
        this.position = answer[this.field];
        await this.onEvents(answer);
      } catch (error) {
        if (!this.running || error.name === "AbortError") return;
        if (this.onError?.(error) === "stop") { this.running = false; return; }
        failures += 1;
        // Back off: a stopped server is not hammered, a restarted one is
        // found within seconds.
        const wait = error.retryAfter ? error.retryAfter * 1000 : Math.min(500 * 2 ** (failures - 1), 5000);
        await sleep(wait);
      }
    }
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
