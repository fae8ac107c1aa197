// The conversation screen: a MessageWindow (window.js) rendered into a
// scroller, with the scroll policy chat screens need (docs: CLIENTS.md):
// - opens at the newest page, at the bottom; a short chat sits at the top;
// - loads older pages when the top is near, and keeps the row being read
//   exactly where it was: before a change the topmost visible row that
//   survives it is measured, after it scrollTop moves by how far that row
//   moved, in the same task, before the browser paints (the scroller has
//   `overflow-anchor: none`, so the browser's own anchoring never adds to it);
// - trims far rows both ways with the window's capacity rule;
// - follows new messages only when the reader is near the bottom, else
//   counts them ("N new"), and "jump to latest" replaces the rows with the
//   newest page;
// - jumps to a reply's original (`around`), to the first unread, and back;
// - applies edits and deletions in place, from the live feed;
// - sends with a `client_id`, shows pending and failed rows, and retries
//   with the same `client_id`, so a message is stored once whatever fails;
// - moves the read marker to the newest row that was on screen.

import { get, path, page, query, request } from "./api.js";
import { h, shortTime, announce } from "./dom.js";
import { LongPollFeed, sleep } from "./live.js";
import { MessageWindow } from "./window.js";

// How long a send keeps retrying a transient failure before showing it failed.
const SEND_RETRY_MS = 60_000;
// Within this many pixels of the bottom, the reader is "at the bottom".
const AT_BOTTOM_PX = 4;

export class ConversationScreen {
  constructor({ session, cid, messageID }) {
    this.session = session;
    this.cid = cid;
    this.model = new MessageWindow();
    this.loading = null;
    this.controller = null;
    this.feed = null;
    this.destroyed = false;
    this.newCount = 0;
    this.outbox = new Map(); // client_id -> {body, state, error, element}
    this.markerSent = 0;
    this.markerTimer = null;
    this.returnTo = null;
    this.retryAt = 0;
    this.updates = 0;
    this.build();
    this.open(messageID);
  }

  destroy() {
    this.destroyed = true;
    this.feed?.stop();
    this.controller?.abort();
    clearTimeout(this.markerTimer);
  }

  // MARK: structure

  build() {
    const inboxRow = this.session.inboxRows.get(this.cid);
    this.firstUnreadID = inboxRow?.first_unread_id ?? null;
    this.title = h("h1", { id: "conversation-title" }, this.cid);
    this.subtitle = h("span", { class: "subtitle" });
    this.firstUnreadButton = h("button", { type: "button", class: "first-unread", hidden: this.firstUnreadID === null,
      onclick: () => this.jumpTo(this.firstUnreadID, { remember: true }) },
    `First unread${inboxRow?.unread_count ? ` (${inboxRow.unread_capped ? "999+" : inboxRow.unread_count})` : ""}`);
    this.topEdge = h("div", { class: "edge top-edge", "aria-hidden": "true" });
    this.list = h("ol", { class: "rows", "aria-label": "Messages" });
    this.bottomEdge = h("div", { class: "edge bottom-edge", "aria-hidden": "true" });
    this.pendingList = h("ol", { class: "pending-rows", "aria-label": "Messages being sent" });
    this.scroller = h("div", { class: "scroller", tabindex: "0", "aria-labelledby": "conversation-title",
      onscroll: () => this.scheduleEdgeCheck(), onkeydown: (event) => this.onKey(event) },
    this.topEdge, this.list, this.bottomEdge, this.pendingList);
    this.newButton = h("button", { type: "button", class: "new-count", hidden: true,
      onclick: () => this.jumpToLatest() }, "");
    this.backButton = h("button", { type: "button", class: "back-to", hidden: true,
      onclick: () => this.goBack() }, "↩ Back to where you were");
    this.composerField = h("textarea", { id: "composer", name: "body", rows: 1, maxlength: 16384,
      placeholder: "Write a message", "aria-label": "Message",
      onkeydown: (event) => {
        if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); this.submit(); }
      } });
    const canWrite = this.session.user !== null;
    this.composer = h("form", { class: "composer", onsubmit: (event) => { event.preventDefault(); this.submit(); } },
      this.composerField, h("button", { type: "submit", class: "primary", disabled: !canWrite }, "Send"));
    if (!canWrite) {
      this.composerField.disabled = true;
      this.composerField.placeholder = "Choose a user (top right) to write";
    }
    this.element = h("section", { class: "screen conversation-screen", "aria-labelledby": "conversation-title" },
      h("div", { class: "conversation-head" },
        h("a", { href: "#/inbox", class: "back", "aria-label": "Back to the inbox" }, "‹ Inbox"),
        h("div", { class: "heading" }, this.title, this.subtitle),
        this.firstUnreadButton),
      h("div", { class: "scroller-frame" }, this.scroller, this.newButton, this.backButton),
      this.composer);
  }

  // MARK: opening and pages

  async open(messageID) {
    let meta;
    try {
      meta = await get(path.conversation(this.cid));
    } catch (error) {
      if (this.destroyed) return;
      if (error.status === 404) return this.showMissing();
      this.subtitle.textContent = `Cannot be read: ${error.message}`;
      return;
    }
    if (this.destroyed) return;
    this.title.textContent = meta.title || meta.id;
    document.title = `${meta.title || meta.id} · Chat history`;
    const count = meta.message_count;
    this.subtitle.textContent = `${meta.id} · ${count.toLocaleString("en")} ${count === 1 ? "message" : "messages"}`;
    const loaded = await this.load(messageID !== null ? { kind: "jump", id: messageID } : { kind: "open" }, "open");
    if (!loaded || this.destroyed) return;
    this.startFeed(this.model.newestReadVersion);
  }

  showMissing() {
    this.element.classList.add("missing");
    this.scroller.replaceChildren(h("p", { class: "status error", role: "alert" },
      "This conversation does not exist, or you are not one of its members."));
    this.composer.hidden = true;
  }

  // Fetches the page `intent` needs and applies it. One page at a time:
  // a scroll load waits for the one in flight; an open, a jump or "latest"
  // cancels it.
  async load(intent, label) {
    const scrollLoad = label === "older" || label === "newer";
    if (scrollLoad && (this.loading || Date.now() < this.retryAt)) return false;
    const windowRequest = this.model.nextRequest(intent);
    if (!windowRequest) return false;
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.setLoading(label);
    let answer;
    try {
      answer = await page(this.cid, windowRequest, controller.signal);
    } catch (error) {
      if (error.name === "AbortError" || this.destroyed) return false;
      if (this.controller === controller) { this.controller = null; this.setLoading(null); }
      if (error.status === 404) { this.showMissing(); return false; }
      this.retryAt = Date.now() + 2000;
      this.setEdgeText(`Messages cannot be loaded (${error.message}); scroll to try again.`);
      return false;
    }
    if (this.controller !== controller || this.destroyed) return false;
    this.controller = null;
    this.setLoading(null);
    this.render(this.model.apply(answer, windowRequest));
    this.refreshStaleRows();
    requestAnimationFrame(() => this.checkEdges());
    return true;
  }

  setLoading(label) {
    this.loading = label;
    this.scroller.dataset.loading = label ?? "";
    this.updateEdges();
  }

  // Re-reads the rows a page carried from before the feed's position.
  async refreshStaleRows() {
    for (const refresh of this.model.takePendingRefreshes()) {
      try {
        const answer = await get(path.events(this.cid) + query({ since: refresh.since, min_id: refresh.minID,
          max_id: refresh.maxID, limit: 1000 }));
        if (this.destroyed) return;
        this.render(this.model.applyRefresh(answer.events));
      } catch {
        // The live feed carries later changes anyway; a missed refresh leaves an older copy of a row.
      }
    }
  }

  // MARK: live changes

  startFeed(version) {
    this.feed = new LongPollFeed({
      url: path.events(this.cid), position: version, field: "version",
      onEvents: (answer) => this.applyEvents(answer),
      onError: (error) => {
        if (error.status === 404) { this.showMissing(); return "stop"; }
        if (error.code === "invalid_version") {
          // The feed's position is from another database: start again.
          this.feed.stop();
          this.load({ kind: "open" }, "latest").then(() => this.startFeed(this.model.newestReadVersion));
          return "stop";
        }
        return "retry";
      },
    });
    this.feed.start();
  }

  applyEvents(answer) {
    const knownBefore = this.model.newestKnownID ?? 0;
    const following = this.isAtBottom(AT_BOTTOM_PX + 60) && this.model.attachedToTail;
    const fresh = answer.events.filter((e) => e.type === "created" && e.message.id > knownBefore);
    const ours = fresh.filter((e) => this.outbox.has(e.message.client_id));
    for (const event of ours) this.settleOutbox(event.message.client_id);
    const others = fresh.length - ours.length;
    this.render(this.model.applyEvents(answer.events, answer.has_more ? undefined : answer.version));
    if (others > 0) {
      if (following) {
        const last = fresh[fresh.length - 1].message;
        announce(others === 1 ? `New message from ${last.sender}: ${last.body.slice(0, 140)}` : `${others} new messages`);
      } else {
        this.newCount += others;
        this.showNewCount();
        announce(`${this.newCount} new ${this.newCount === 1 ? "message" : "messages"} below`);
      }
    }
  }

  showNewCount() {
    this.newButton.hidden = this.newCount === 0;
    this.newButton.textContent = `${this.newCount} new ↓`;
    this.newButton.setAttribute("aria-label", `${this.newCount} new messages: jump to the latest`);
  }

  async jumpToLatest() {
    this.newCount = 0;
    this.showNewCount();
    this.hideBack();
    await this.load({ kind: "open" }, "latest");
    this.scroller.focus({ preventScroll: true });
  }

  // MARK: rendering

  // Makes the rows match the window and scrolls as the changes ask: to the
  // bottom for a replacement, to the anchor for a jump, along with new rows
  // when the reader was at the bottom, else not at all for the row being read.
  render(changes) {
    if (!changes.length) { this.updateEdges(); return; }
    const types = new Set(changes.map((c) => c.type));
    const wasAtBottom = this.isAtBottom(AT_BOTTOM_PX + 60);
    const wanted = new Set(this.model.messages.map((m) => m.id));
    const anchor = types.has("replaced") || types.has("jumped") ? null : this.captureAnchor(wanted);
    this.reconcile(wanted);
    this.updateEdges();
    const jumped = changes.find((c) => c.type === "jumped");
    if (types.has("replaced")) {
      this.scrollToBottom();
    } else if (jumped) {
      this.revealRow(jumped.anchorID);
    } else if (types.has("appended") && wasAtBottom && this.model.attachedToTail) {
      this.scrollToBottom();
    } else if (anchor) {
      this.restoreAnchor(anchor);
    }
    this.updates += 1;
    this.scroller.dataset.updates = String(this.updates);
    this.scroller.dataset.lastChange = changes.map((c) => c.type).join(" ");
    this.noteSeen();
  }

  // The topmost visible row that the change keeps, and where it is now.
  captureAnchor(wanted) {
    const frameTop = this.scroller.getBoundingClientRect().top;
    for (const element of this.list.children) {
      const rect = element.getBoundingClientRect();
      if (rect.bottom <= frameTop) continue;
      if (wanted.has(Number(element.dataset.id))) return { id: element.dataset.id, top: rect.top };
    }
    return null;
  }

  restoreAnchor(anchor) {
    const element = this.rowElement(anchor.id);
    if (!element) return;
    const delta = element.getBoundingClientRect().top - anchor.top;
    if (delta !== 0) this.scroller.scrollTop += delta;
  }

  // Removes the rows the window dropped, inserts the new ones in order and
  // rebuilds those whose version changed (an edit or a deletion in place).
  reconcile(wanted) {
    const existing = new Map();
    for (const element of [...this.list.children]) {
      const id = Number(element.dataset.id);
      if (!wanted.has(id)) element.remove(); else existing.set(id, element);
    }
    let cursor = this.list.firstElementChild;
    for (const message of this.model.messages) {
      let element = existing.get(message.id);
      if (element && Number(element.dataset.version) !== message.version) {
        const fresh = this.row(message);
        element.replaceWith(fresh);
        if (cursor === element) cursor = fresh;
        element = fresh;
      }
      if (!element) {
        this.list.insertBefore(this.row(message), cursor);
        continue;
      }
      cursor = element.nextElementSibling;
    }
  }

  row(message) {
    const own = this.session.user && (message.sender === this.session.user || this.session.user === "me" && message.sender === this.session.label);
    const classes = ["row"];
    if (message.deleted) classes.push("deleted");
    if (own) classes.push("own");
    if (message.id === this.firstUnreadID) classes.push("first-unread-row");
    let reply = null;
    if (message.reply_to !== null && message.reply_to !== undefined) {
      const original = this.model.message(message.reply_to);
      const excerpt = original && !original.deleted ? `${original.sender}: ${original.body.slice(0, 60)}` : `message #${message.reply_to}`;
      reply = h("button", { type: "button", class: "reply-ref", dataset: { target: message.reply_to },
        onclick: () => this.jumpTo(message.reply_to, { remember: true }) }, `↪ In reply to ${excerpt}`);
    }
    return h("li", { class: classes.join(" "), id: `m-${message.id}`, tabindex: "-1",
      dataset: { id: message.id, version: message.version } },
    h("div", { class: "meta" },
      h("span", { class: "sender" }, message.sender),
      h("time", { datetime: message.created_at, title: message.created_at }, shortTime(message.created_at)),
      message.edited_at && !message.deleted ? h("span", { class: "edited" }, "edited") : null),
    reply,
    message.deleted
      ? h("p", { class: "body tombstone" }, "This message was deleted.")
      : h("p", { class: "body" }, message.body));
  }

  rowElement(id) {
    return this.list.querySelector(`li[data-id="${id}"]`);
  }

  updateEdges() {
    const model = this.model;
    if (!model.isLoaded) {
      this.setEdgeText(this.loading ? "Loading…" : "");
    } else {
      this.topEdge.textContent = model.hasOlder
        ? (this.loading === "older" ? "Loading older messages…" : "Older messages")
        : "This is the beginning of the conversation.";
      this.bottomEdge.textContent = model.attachedToTail ? ""
        : (this.loading === "newer" ? "Loading newer messages…" : "Newer messages");
    }
    this.bottomEdge.classList.toggle("at-tail", model.isLoaded && model.attachedToTail);
    this.scroller.dataset.hasOlder = String(model.hasOlder);
    this.scroller.dataset.attached = String(model.attachedToTail);
  }

  setEdgeText(text) {
    this.topEdge.textContent = text;
  }

  // MARK: scrolling

  isAtBottom(slack = AT_BOTTOM_PX) {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight <= slack;
  }

  scrollToBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  // Puts a row in the middle of the scroller (or `offset` px below its
  // top) and marks it for a moment.
  revealRow(id, offset = null) {
    const element = this.rowElement(id);
    if (!element) return;
    const frameTop = this.scroller.getBoundingClientRect().top;
    const top = element.getBoundingClientRect().top - frameTop;
    const wanted = offset ?? Math.max(0, (this.scroller.clientHeight - element.offsetHeight) / 2);
    this.scroller.scrollTop += top - wanted;
    for (const marked of this.list.querySelectorAll(".target")) marked.classList.remove("target");
    element.classList.add("target");
    element.focus({ preventScroll: true });
  }

  scheduleEdgeCheck() {
    if (this.edgeCheckScheduled) return;
    this.edgeCheckScheduled = true;
    requestAnimationFrame(() => {
      this.edgeCheckScheduled = false;
      this.checkEdges();
    });
  }

  // Loads what the scroll position asks for, and settles at the bottom.
  checkEdges() {
    if (this.destroyed || !this.model.isLoaded) return;
    const s = this.scroller;
    const near = s.clientHeight;
    if (s.scrollTop < near && this.model.hasOlder) {
      this.load({ kind: "scrollUp" }, "older");
    } else if (s.scrollHeight - s.scrollTop - s.clientHeight < near && !this.model.attachedToTail) {
      this.load({ kind: "scrollDown" }, "newer");
    }
    if (this.model.attachedToTail && this.isAtBottom()) {
      if (this.newCount) { this.newCount = 0; this.showNewCount(); }
      this.settleAtBottom();
    }
    this.noteSeen();
  }

  // Back at the bottom: keep only the newest page, unless the page alone
  // would be too short to scroll away from the top (then the next scroll
  // would load older rows again at once).
  settleAtBottom() {
    const rows = this.list.children;
    if (this.loading || rows.length <= this.model.pageSize) return;
    const keptFrom = rows[rows.length - this.model.pageSize];
    const keptHeight = this.list.getBoundingClientRect().bottom - keptFrom.getBoundingClientRect().top;
    if (keptHeight < this.scroller.clientHeight * 3) return;
    this.render(this.model.settleAtBottom());
  }

  onKey(event) {
    if (event.key === "End" && event.ctrlKey) { event.preventDefault(); this.jumpToLatest(); }
  }

  // MARK: jumps

  async jumpTo(id, { remember = false } = {}) {
    if (remember) {
      const anchor = this.captureAnchor(new Set(this.model.messages.map((m) => m.id)));
      if (anchor) {
        this.returnTo = { id: Number(anchor.id), offset: anchor.top - this.scroller.getBoundingClientRect().top };
        this.backButton.hidden = false;
      }
    }
    history.replaceState(null, "", `#/conversations/${encodeURIComponent(this.cid)}/messages/${id}`);
    if (this.model.indexOf(id) >= 0) {
      this.revealRow(id);
      this.checkEdges();
      return;
    }
    await this.load({ kind: "jump", id }, "jump");
  }

  async goBack() {
    const target = this.returnTo;
    this.hideBack();
    if (!target) return;
    if (this.model.indexOf(target.id) >= 0) {
      this.revealRow(target.id, target.offset);
    } else if (await this.load({ kind: "jump", id: target.id }, "jump")) {
      this.revealRow(target.id, target.offset);
    }
    history.replaceState(null, "", `#/conversations/${encodeURIComponent(this.cid)}`);
  }

  hideBack() {
    this.returnTo = null;
    this.backButton.hidden = true;
  }

  // MARK: read marker

  // The newest row that has been on screen moves the marker (forward only,
  // a moment later, so scrolling past many rows sends one request).
  noteSeen() {
    if (!this.session.user || !this.model.isLoaded) return;
    const frameBottom = this.scroller.getBoundingClientRect().bottom;
    const rows = this.list.children;
    let seen = 0;
    for (let i = rows.length - 1; i >= 0; i -= 1) {
      if (rows[i].getBoundingClientRect().top < frameBottom) { seen = Number(rows[i].dataset.id); break; }
    }
    if (seen <= this.markerSent || this.markerTimer) return;
    this.markerTimer = setTimeout(() => {
      this.markerTimer = null;
      this.sendMarker(seen);
    }, 500);
  }

  async sendMarker(id) {
    if (this.destroyed || id <= this.markerSent) return;
    this.markerSent = id;
    try {
      const answer = await request("PUT", path.readMarker(this.cid, this.session.user), { body: { last_read_id: id } });
      this.scroller.dataset.readMarker = String(answer.last_read_id ?? "");
      const row = this.session.inboxRows.get(this.cid);
      if (row) Object.assign(row, answer);
    } catch {
      // Not a member (open mode may view any conversation): nothing to move.
    }
  }

  // MARK: sending

  submit() {
    const body = this.composerField.value;
    if (!body.trim() || !this.session.user) return;
    this.composerField.value = "";
    const clientID = crypto.randomUUID();
    const entry = { clientID, body, state: "pending", error: null, element: null };
    this.outbox.set(clientID, entry);
    this.renderOutboxEntry(entry);
    if (this.model.attachedToTail) this.scrollToBottom(); else this.jumpToLatest();
    this.send(entry);
  }

  async send(entry) {
    entry.state = "pending";
    this.renderOutboxEntry(entry);
    const started = Date.now();
    const payload = { body: entry.body, client_id: entry.clientID };
    if (this.session.mode === "open") payload.sender = this.session.user;
    for (let attempt = 0; ; attempt += 1) {
      try {
        const stored = await request("POST", path.messages(this.cid), { body: payload });
        if (this.destroyed) return;
        this.settleOutbox(entry.clientID);
        this.render(this.model.applyRefresh([{ message: stored }]));
        if (this.model.attachedToTail) this.scrollToBottom();
        return;
      } catch (error) {
        if (this.destroyed || !this.outbox.has(entry.clientID)) return;
        if (!error.isTransient || Date.now() - started > SEND_RETRY_MS) {
          entry.state = "failed";
          entry.error = error.message;
          this.renderOutboxEntry(entry);
          announce("A message could not be sent");
          return;
        }
        await sleep(error.retryAfter ? error.retryAfter * 1000 : Math.min(500 * 2 ** attempt, 4000));
      }
    }
  }

  settleOutbox(clientID) {
    const entry = this.outbox.get(clientID);
    if (!entry) return;
    this.outbox.delete(clientID);
    entry.element?.remove();
  }

  renderOutboxEntry(entry) {
    const status = entry.state === "failed"
      ? h("span", { class: "send-state failed" }, `Not sent: ${entry.error} `,
        h("button", { type: "button", class: "link", onclick: () => this.send(entry) }, "Retry"))
      : h("span", { class: "send-state" }, "Sending…");
    const element = h("li", { class: `row own outgoing ${entry.state}`, dataset: { clientId: entry.clientID, state: entry.state } },
      h("div", { class: "meta" }, h("span", { class: "sender" }, this.session.label ?? this.session.user), status),
      h("p", { class: "body" }, entry.body));
    if (entry.element) entry.element.replaceWith(element); else this.pendingList.append(element);
    entry.element = element;
  }
}
