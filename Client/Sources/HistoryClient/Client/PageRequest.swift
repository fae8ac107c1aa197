import Foundation

/// Where a page starts: the contract's id cursors, never an offset.
public enum PageCursor: Hashable, Sendable {
    /// The newest messages: the bottom of the chat.
    case newest
    /// The messages closest below the id (ids < id): scrolling up.
    case before(Int64)
    /// The messages closest above the id (ids > id): scrolling down.
    case after(Int64)
    /// Closest above `after` and below `before`: filling a known gap.
    case between(after: Int64, before: Int64)
    /// Half a page older than the id, the id, then newer ones: jumping to a reply's original.
    case around(Int64)
    /// The page `around` the first message created at or after the time
    /// (`around_time`): jumping to a date. When no message is that recent,
    /// the newest page, its anchor not found.
    case aroundTime(Date)
}

/// A page request: cursor, size and the optional server-side trimming window.
public struct PageRequest: Hashable, Sendable {
    public var cursor: PageCursor
    /// 1...200; nil leaves it to the server (50).
    public var limit: Int?
    /// Only beside `.after`: when more than `window` messages lie above the
    /// cursor, the server answers the newest page with `reset: true`.
    public var window: Int?

    public init(cursor: PageCursor = .newest, limit: Int? = nil, window: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
        self.window = window
    }

    public static func newest(limit: Int? = nil) -> PageRequest {
        PageRequest(cursor: .newest, limit: limit)
    }

    public static func before(_ id: Int64, limit: Int? = nil) -> PageRequest {
        PageRequest(cursor: .before(id), limit: limit)
    }

    public static func after(_ id: Int64, limit: Int? = nil, window: Int? = nil) -> PageRequest {
        PageRequest(cursor: .after(id), limit: limit, window: window)
    }

    public static func between(after: Int64, before: Int64, limit: Int? = nil) -> PageRequest {
        PageRequest(cursor: .between(after: after, before: before), limit: limit)
    }

    public static func around(_ id: Int64, limit: Int? = nil) -> PageRequest {
        PageRequest(cursor: .around(id), limit: limit)
    }

    public static func aroundTime(_ time: Date, limit: Int? = nil) -> PageRequest {
        PageRequest(cursor: .aroundTime(time), limit: limit)
    }

    /// The query items, in a stable order.
    var queryItems: [(String, String)] {
        var items: [(String, String)] = []
        switch cursor {
        case .newest: break
        case .before(let id): items.append(("before", String(id)))
        case .after(let id): items.append(("after", String(id)))
        case .between(let after, let before):
            items.append(("after", String(after)))
            items.append(("before", String(before)))
        case .around(let id): items.append(("around", String(id)))
        case .aroundTime(let time): items.append(("around_time", RFC3339.string(from: time)))
        }
        if let limit { items.append(("limit", String(limit))) }
        if let window { items.append(("window", String(window))) }
        return items
    }
}

/// The filters of `GET .../events`.
public struct EventQuery: Hashable, Sendable {
    /// Changes after this version (0...current).
    public var since: Int64
    /// 1...1000; nil leaves it to the server (100).
    public var limit: Int?
    /// Keep only messages with `id >= minID`.
    public var minID: Int64?
    /// Keep only messages with `id <= maxID`.
    public var maxID: Int64?
    /// Park up to this long until a change exists (0...60 s); nil or zero answers at once.
    public var wait: Duration?
    /// `typing=1`: the answer carries who is typing
    /// (``HistoryEventBatch/typing``), and a parked poll also answers when
    /// that list changes.
    public var typing: Bool

    public init(since: Int64, limit: Int? = nil, minID: Int64? = nil, maxID: Int64? = nil, wait: Duration? = nil,
                typing: Bool = false) {
        self.since = since
        self.limit = limit
        self.minID = minID
        self.maxID = maxID
        self.wait = wait
        self.typing = typing
    }

    var queryItems: [(String, String)] {
        var items = [("since", String(since))]
        if let limit { items.append(("limit", String(limit))) }
        if let minID { items.append(("min_id", String(minID))) }
        if let maxID { items.append(("max_id", String(maxID))) }
        if let wait { items.append(("wait", Self.format(wait))) }
        if typing { items.append(("typing", "1")) }
        return items
    }

    /// Whole seconds as an integer, else up to milliseconds as a decimal.
    static func format(_ wait: Duration) -> String {
        let milliseconds = Int64((wait.seconds * 1000).rounded())
        if milliseconds % 1000 == 0 { return String(milliseconds / 1000) }
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
