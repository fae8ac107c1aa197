import HistoryStore

extension JSONWriter {
    /// `{"typing":["ana","bo"]}`: a stream's `typing` event.
    /// User ids are `[A-Za-z0-9_.@-]`: nothing to escape.
    static func typingList(_ typers: [UserID]) -> [UInt8] {
        var bytes = Array(#"{"typing":"#.utf8)
        appendTypers(typers, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// A change feed with `"typing": [...]` beside its events (a long-poll
    /// with `typing=1`); the list's bytes come out of `budget` first, so
    /// the whole answer stays within it.
    static func changeFeed(_ feed: ChangeFeed, typing typers: [UserID], budget: Int = .max) -> [UInt8] {
        var list = Array(#","typing":"#.utf8)
        appendTypers(typers, to: &list)
        var bytes = changeFeed(feed, budget: budget == .max ? .max : budget - list.count)
        // The feed is one object: its closing brace goes after the list.
        bytes.removeLast()
        bytes.append(contentsOf: list)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private static func appendTypers(_ typers: [UserID], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, user) in typers.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: user.rawValue.utf8)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
