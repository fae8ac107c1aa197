/// The page rules both stores share, so a SQLite and a PostgreSQL page of
/// the same rows carry the same flags and the same `around` split.
extension Page {
    /// A page whose flags come from the conversation's kept oldest/newest
    /// ids: exact and O(1). An empty page has no edges to compare, so its
    /// flags are what the caller knows of the range it asked for.
    package init(rows: MessageRows, in conversation: Conversation, emptyHasOlder: Bool, emptyHasNewer: Bool) {
        guard let first = rows.records.first, let last = rows.records.last else {
            self.init(rows: rows, hasOlder: emptyHasOlder, hasNewer: emptyHasNewer, version: conversation.version)
            return
        }
        self.init(rows: rows,
                  hasOlder: conversation.oldestID.map { $0 < first.id } ?? false,
                  hasNewer: conversation.newestID.map { $0 > last.id } ?? false,
                  version: conversation.version)
    }

    /// How many of the messages read on each side of an `around` anchor a
    /// page keeps: `floor(limit/2)` older ones, then newer ones up to
    /// `limit`; when one side runs out, the other fills the page.
    package static func aroundSplit(older: Int, anchor: Int, newer: Int, limit: Int) -> (older: Int, newer: Int) {
        var olderTake = min(older, limit / 2)
        let newerTake = min(newer, limit - anchor - olderTake)
        olderTake = min(older, limit - anchor - newerTake)
        return (olderTake, newerTake)
    }
}
