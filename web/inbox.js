// The inbox: the viewer's conversations, the one with the newest message
// first, each with its last message and unread count; kept live by the
// inbox feed (`/v1/users/{uid}/events`), which moves a row to the top when
// its conversation gets a message.

import { get, path, query } from "./api.js";
import { h, shortTime, announce } from "./dom.js";
import { LongPollFeed } from "./live.js";

const PAGE = 50;

export class InboxScreen {
  constructor({ session, onChooseUser }) {
    this.session = session;
    this.rows = new Map(); // conversation id -> inbox row
    this.nextCursor = null;
    this.feed = null;
    this.list = h("ul", { class: "inbox", "aria-label": "Conversations", onkeydown: (e) => this.onKey(e) });
    this.status = h("p", { class: "status", role: "status" });
    this.more = h("button", { type: "button", class: "more", hidden: true, onclick: () => this.loadMore() },
      "More conversations");
    const openField = h("input", { id: "open-cid", name: "cid", placeholder: "conversation id", autocomplete: "off",
      pattern: "[A-Za-z0-9_\\-]{1,64}", required: true });
    const openForm = h("form", { class: "open-by-id", onsubmit: (event) => {
      event.preventDefault();
      const cid = openField.value.trim();
      if (cid) location.hash = `#/conversations/${encodeURIComponent(cid)}`;
    } }, h("label", { for: "open-cid" }, "Open a conversation by id"), h("span", { class: "row-inline" },
      openField, h("button", { type: "submit" }, "Open")));
    this.element = h("section", { class: "screen inbox-screen", "aria-labelledby": "inbox-title" },
      h("h1", { id: "inbox-title" }, "Inbox"), this.status, this.list, this.more, openForm);
    if (!session.user) {
      this.status.replaceChildren("Name the user whose conversations to show. ",
        h("button", { type: "button", class: "link", onclick: onChooseUser }, "Choose user"));
      return;
    }
    this.load();
  }

  destroy() {
    this.feed?.stop();
  }

  async load() {
    this.status.textContent = "Loading…";
    try {
      const answer = await get(path.inbox(this.session.user) + query({ limit: PAGE }));
      this.absorbPage(answer);
      this.feed = new LongPollFeed({
        url: path.inboxEvents(this.session.user), position: answer.activity, field: "activity",
        onEvents: (feedAnswer) => this.applyEvents(feedAnswer.events),
      });
      this.feed.start();
    } catch (error) {
      this.status.textContent = `The inbox cannot be read: ${error.message}`;
    }
  }

  async loadMore() {
    if (!this.nextCursor) return;
    try {
      this.absorbPage(await get(path.inbox(this.session.user) + query({ limit: PAGE, cursor: this.nextCursor })));
    } catch (error) {
      this.status.textContent = `More conversations cannot be read: ${error.message}`;
    }
  }

  absorbPage(answer) {
    for (const row of answer.conversations) this.rows.set(row.conversation.id, row);
    this.nextCursor = answer.next_cursor;
    this.render();
  }

  applyEvents(events) {
    let unread = 0;
    for (const event of events) {
      if (event.type === "removed") {
        this.rows.delete(event.conversation_id);
      } else {
        const before = this.rows.get(event.conversation.id);
        if (event.unread_count > (before?.unread_count ?? 0)) unread += event.unread_count - (before?.unread_count ?? 0);
        this.rows.set(event.conversation.id, event);
      }
    }
    this.render();
    if (unread > 0) announce(`${unread} new ${unread === 1 ? "message" : "messages"} in your inbox`);
  }

  // Most recent message first; conversations without messages last, by id.
  sortedRows() {
    return [...this.rows.values()].sort((a, b) => {
      const x = a.last_message?.id ?? -1;
      const y = b.last_message?.id ?? -1;
      if (x !== y) return y - x;
      return a.conversation.id < b.conversation.id ? -1 : 1;
    });
  }

  render() {
    const focusedID = document.activeElement?.closest?.(".inbox-row")?.dataset.cid;
    const items = this.sortedRows().map((row) => this.item(row));
    this.list.replaceChildren(...items);
    this.session.inboxRows.clear();
    for (const row of this.rows.values()) this.session.inboxRows.set(row.conversation.id, row);
    this.more.hidden = !this.nextCursor;
    this.status.textContent = items.length ? "" : "No conversations yet.";
    if (focusedID) this.list.querySelector(`[data-cid="${CSS.escape(focusedID)}"] a`)?.focus();
  }

  item(row) {
    const conversation = row.conversation;
    const last = row.last_message;
    const unread = row.unread_count > 0
      ? h("span", { class: "badge", "aria-label": `${row.unread_capped ? "more than 999" : row.unread_count} unread` },
        row.unread_capped ? "999+" : String(row.unread_count))
      : null;
    const preview = last
      ? (last.deleted ? h("em", {}, `${last.sender}: message deleted`) : `${last.sender}: ${last.body}`)
      : h("em", {}, "No messages yet");
    return h("li", { class: `inbox-row${unread ? " unread" : ""}`, dataset: { cid: conversation.id } },
      h("a", { href: `#/conversations/${encodeURIComponent(conversation.id)}` },
        h("span", { class: "title" }, conversation.title || conversation.id,
          conversation.title && conversation.title !== conversation.id ? h("span", { class: "cid" }, conversation.id) : null),
        last ? h("time", { datetime: last.created_at }, shortTime(last.created_at)) : null,
        h("span", { class: "preview" }, preview),
        unread));
  }

  // Up and down move between conversations; Home and End to the ends.
  onKey(event) {
    const links = [...this.list.querySelectorAll("a")];
    const index = links.indexOf(document.activeElement);
    let next = null;
    if (event.key === "ArrowDown") next = links[Math.min(index + 1, links.length - 1)];
    else if (event.key === "ArrowUp") next = links[Math.max(index - 1, 0)];
    else if (event.key === "Home") next = links[0];
    else if (event.key === "End") next = links[links.length - 1];
    if (next) { event.preventDefault(); next.focus(); }
  }
}
