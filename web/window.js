// The messages a conversation screen renders, with the policy of the Swift
// client's MessageWindow (Sources/HistoryClient/Window), rule for rule:
// open at the newest page, prepend older pages (trimming the newest end past
// capacity, which detaches the window from the tail), append newer pages
// (trimming the oldest end), shrink back to one page at the bottom, and
// follow the live tail only while attached to it.
//
// A value with pure operations and no networking: nextRequest(intent) says
// which page to fetch, apply(page, request) and applyEvents(events, version)
// say what changed, as a list of changes with a nature:
//   {type: "replaced"} | {type: "jumped", anchorID} |
//   {type: "prepended", count, anchorID} | {type: "appended", count} |
//   {type: "inserted", ids} | {type: "trimmed", edge: "oldest"|"newest", count} |
//   {type: "updated", ids}

export class MessageWindow {
  constructor({ pageSize = 50, capacity, serverResetWindow } = {}) {
    this.pageSize = Math.min(Math.max(pageSize, 1), 200);
    this.capacity = Math.max(capacity ?? this.pageSize * 5, this.pageSize);
    this.serverResetWindow = Math.min(Math.max(serverResetWindow ?? this.capacity, 1), 10000);
    this.messages = [];
    this.isLoaded = false;
    this.hasOlder = false;
    this.attachedToTail = false;
    this.newestKnownID = null;
    this.eventVersion = 0;
    this.newestReadVersion = 0;
    this.pendingRefreshes = [];
  }

  get hasNewer() { return this.isLoaded && !this.attachedToTail; }
  get oldestID() { return this.messages.length ? this.messages[0].id : null; }
  get newestID() { return this.messages.length ? this.messages[this.messages.length - 1].id : null; }

  // The first index whose id is >= id (ids ascend).
  insertionIndex(id) {
    let low = 0;
    let high = this.messages.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.messages[middle].id < id) low = middle + 1; else high = middle;
    }
    return low;
  }

  indexOf(id) {
    const position = this.insertionIndex(id);
    return position < this.messages.length && this.messages[position].id === id ? position : -1;
  }

  message(id) {
    const index = this.indexOf(id);
    return index < 0 ? null : this.messages[index];
  }

  // intent: {kind: "open"} | {kind: "scrollUp"} | {kind: "scrollDown"} |
  // {kind: "reachedBottom"} | {kind: "jump", id}. Returns
  // {cursor: "newest"|"before"|"after"|"around", id?, limit, window?} or null.
  nextRequest(intent) {
    const limit = this.pageSize;
    if (!this.isLoaded) {
      return intent.kind === "jump" ? { cursor: "around", id: intent.id, limit } : { cursor: "newest", limit };
    }
    switch (intent.kind) {
      case "open":
        return { cursor: "newest", limit };
      case "scrollUp":
        return this.hasOlder && this.oldestID !== null ? { cursor: "before", id: this.oldestID, limit } : null;
      case "scrollDown":
        return !this.attachedToTail && this.newestID !== null
          ? { cursor: "after", id: this.newestID, limit, window: this.serverResetWindow } : null;
      case "reachedBottom":
        return this.attachedToTail ? null : { cursor: "newest", limit };
      case "jump":
        return this.indexOf(intent.id) < 0 ? { cursor: "around", id: intent.id, limit } : null;
      default:
        return null;
    }
  }

  // The user is at the bottom of an attached window: keep the newest page only.
  settleAtBottom() {
    if (!this.attachedToTail || this.messages.length <= this.pageSize) return [];
    const count = this.messages.length - this.pageSize;
    this.messages.splice(0, count);
    this.hasOlder = true;
    return [{ type: "trimmed", edge: "oldest", count }];
  }

  takePendingRefreshes() {
    const refreshes = this.pendingRefreshes;
    this.pendingRefreshes = [];
    return refreshes;
  }

  // MARK: pages

  apply(page, request) {
    try {
      switch (request.cursor) {
        case "newest": return this.replace(page, { type: "replaced" });
        case "around": return this.replace(page, { type: "jumped", anchorID: request.id });
        case "after":
          return page.reset === true ? this.replace(page, { type: "replaced" }) : this.append(page, request.id);
        case "before": return this.prepend(page, request.id);
        default: return [];
      }
    } finally {
      this.newestReadVersion = Math.max(this.newestReadVersion, page.version);
    }
  }

  prepend(page, cursor) {
    if (!this.isLoaded || !this.hasOlder || this.oldestID !== cursor) return [];
    const rows = page.messages.filter((m) => m.id < cursor);
    this.hasOlder = page.has_older;
    this.noteKnown(page.newest_id);
    if (!rows.length) return [];
    this.messages.unshift(...rows);
    this.noteStaleRows(rows, page.version);
    return [{ type: "prepended", count: rows.length, anchorID: cursor }, ...this.trimToCapacity("newest")];
  }

  append(page, cursor) {
    if (!this.isLoaded || this.newestID !== cursor) return [];
    const rows = page.messages.filter((m) => m.id > cursor);
    this.noteKnown(page.newest_id);
    this.messages.push(...rows);
    this.attachedToTail = !page.has_newer && (this.newestKnownID ?? -Infinity) <= (this.newestID ?? -Infinity);
    this.noteStaleRows(rows, page.version);
    const changes = rows.length ? [{ type: "appended", count: rows.length }] : [];
    return [...changes, ...this.trimToCapacity("oldest")];
  }

  replace(page, change) {
    let rows = page.messages.map((m) => {
      const held = this.message(m.id);
      return held && held.version > m.version ? held : m;
    });
    const pageNewest = page.newest_id ?? -Infinity;
    if (this.isLoaded && this.attachedToTail && !page.has_newer
        && (!this.hasOlder || !page.messages.length || (this.oldestID ?? Infinity) <= pageNewest)) {
      rows = rows.concat(this.messages.filter((m) => m.id > pageNewest));
    }
    this.messages = rows;
    this.isLoaded = true;
    this.hasOlder = page.has_older;
    this.noteKnown(page.newest_id);
    this.attachedToTail = !page.has_newer && (this.newestKnownID ?? -Infinity) <= (this.newestID ?? -Infinity);
    this.noteStaleRows(page.messages, page.version);
    return [change, ...this.trimToCapacity(this.attachedToTail ? "oldest" : "newest")];
  }

  noteStaleRows(rows, version) {
    if (version >= Math.max(this.eventVersion, this.newestReadVersion) || !rows.length) return;
    this.pendingRefreshes.push({ since: version, minID: rows[0].id, maxID: rows[rows.length - 1].id });
  }

  noteKnown(id) {
    if (id === null || id === undefined) return;
    this.newestKnownID = this.newestKnownID === null ? id : Math.max(this.newestKnownID, id);
  }

  trimToCapacity(edge) {
    const excess = this.messages.length - this.capacity;
    if (excess <= 0) return [];
    if (edge === "oldest") {
      this.messages.splice(0, excess);
      this.hasOlder = true;
    } else {
      this.messages.splice(this.messages.length - excess, excess);
      this.attachedToTail = false;
    }
    return [{ type: "trimmed", edge, count: excess }];
  }

  // MARK: events

  // All changes up to `version` (the feed answer's); apply a whole answer at once.
  applyEvents(events, version) {
    const highest = events.reduce((v, e) => Math.max(v, e.version), this.eventVersion);
    this.eventVersion = Math.max(this.eventVersion, version ?? highest, highest);
    return this.merge(events.map((e) => e.message));
  }

  // The answer to a refresh of some rows: the same rules, no feed position.
  applyRefresh(events) {
    return this.merge(events.map((e) => e.message));
  }

  covers(id) {
    if (!this.isLoaded) return false;
    const aboveFloor = !this.hasOlder || (this.oldestID !== null && id >= this.oldestID);
    const belowCeiling = this.attachedToTail || (this.newestID !== null && id <= this.newestID);
    return aboveFloor && belowCeiling;
  }

  merge(incoming) {
    const updated = [];
    const added = new Map();
    for (const message of incoming) {
      this.noteKnown(message.id);
      if (!this.covers(message.id)) continue;
      const index = this.indexOf(message.id);
      if (index >= 0) {
        if (message.version > this.messages[index].version) {
          this.messages[index] = message;
          updated.push(message.id);
        }
      } else {
        const held = added.get(message.id);
        if (!held || message.version > held.version) added.set(message.id, message);
      }
    }
    const changes = [];
    if (added.size) {
      const sorted = [...added.values()].sort((a, b) => a.id - b.id);
      const previousNewest = this.newestID ?? -Infinity;
      const appended = sorted.filter((m) => m.id > previousNewest);
      const inserted = sorted.filter((m) => m.id < previousNewest);
      for (const message of inserted) this.messages.splice(this.insertionIndex(message.id), 0, message);
      this.messages.push(...appended);
      if (inserted.length) changes.push({ type: "inserted", ids: inserted.map((m) => m.id) });
      if (appended.length) changes.push({ type: "appended", count: appended.length, messages: appended });
    }
    if (updated.length) changes.push({ type: "updated", ids: updated });
    return [...changes, ...this.trimToCapacity(this.attachedToTail ? "oldest" : "newest")];
  }
}
