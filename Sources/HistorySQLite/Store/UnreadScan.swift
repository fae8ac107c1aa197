import HistoryStore
/// What a member has not read, counted with a bounded scan: the
/// conversation's own rows above the marker (one contiguous range of
/// `place`), stopping at the `cap + 1`-th unread message. A conversation
/// with a million unread messages costs what one with a thousand costs.
///
/// Tombstones and the member's own messages above the marker are skipped,
/// not counted, so they are the scan's one unbounded part: a member who
/// posts thousands of messages without moving its marker makes its own
/// count dearer (clients move the marker when they show what they posted).
enum UnreadScan {
    /// Rows examined stop at the first `scanLimit` unread ones.
    static let scanLimit = ReadState.unreadCap + 1

    /// `count` and the lowest id of the unread messages, counting no
    /// further than `scanLimit`.
    static let sql = """
        SELECT count(*), min(id) FROM (
            SELECT id FROM messages
            WHERE place > ? AND place < ? AND deleted = 0 AND sender != ?
            ORDER BY place LIMIT \(scanLimit))
        """

    static func readState(_ connection: SQLiteConnection, seq: Int64, user: UserID, lastReadID: Int64?) throws(StoreError) -> ReadState {
        let found = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: sql)
                .firstRow(MessagePlace.cursor(seq: seq, id: lastReadID ?? 0), MessagePlace.upperBound(seq: seq), user.rawValue) { row in
                    (count: Int(row.int64(0)), first: row.optionalInt64(1))
                }
        }
        let count = found?.count ?? 0
        let capped = count > ReadState.unreadCap
        return ReadState(lastReadID: lastReadID, firstUnreadID: found?.first,
                         unreadCount: min(count, ReadState.unreadCap), unreadCapped: capped)
    }
}
