import HistoryStore

/// What a member has not read, counted as SQLite's `UnreadScan` counts it:
/// the conversation's messages above the marker, not deleted, not sent by
/// the member, read in id order from one seek on the primary key
/// `(conversation_seq, id)` and stopping at the `unreadCap + 1`-th one. A
/// conversation with a million unread messages costs what one with a
/// thousand costs.
///
/// Tombstones and the member's own messages above the marker are skipped,
/// not counted, so they are the scan's one unbounded part, as in SQLite
/// (clients move the marker when they show what they posted).
package enum PostgresUnread {
    /// Rows counted stop at the first `scanLimit` unread ones.
    package static let scanLimit = ReadState.unreadCap + 1

    /// A subquery of one row, `unread_count` (at most `limit`, which is
    /// `scanLimit` when run) and `first_unread` (the lowest unread id), for
    /// the conversation `seq`, the marker `lastReadID` (NULL: nothing read)
    /// and the member `user`, each an SQL expression: the one definition of
    /// "unread" both `sql` and the inbox rows use. `user` is a `bytea` of
    /// the user id's UTF-8 bytes, as `sender` is stored (0003_text_bytes):
    /// bytes compared to bytes, no conversion per row scanned.
    ///
    /// `limit` is a statement parameter, not a constant, on purpose: for a
    /// prepared statement's generic plan PostgreSQL cannot know how many
    /// messages a conversation holds (it assumes the average), and with a
    /// constant LIMIT above that guess it would read and sort every message
    /// above the marker; with a parameter it plans for a LIMIT that stops
    /// early, which is the ordered walk of the primary key that stays
    /// bounded in a conversation of any size.
    package static func scan(seq: String, lastReadID: String, user: String, limit: String) -> String {
        """
        SELECT count(*) AS unread_count, min(id) AS first_unread FROM (
            SELECT id FROM messages
            WHERE conversation_seq = \(seq) AND id > coalesce(\(lastReadID), 0) AND NOT deleted AND sender <> \(user)
            ORDER BY id LIMIT \(limit)) AS unread
        """
    }

    /// The scan as one statement: its own snapshot, one round trip. Typed
    /// parameters, so the binary integers the connection sends always
    /// match what the prepared statement expects.
    package static let sql = scan(seq: "$1::bigint", lastReadID: "$2::bigint", user: "$3::bytea", limit: "$4::bigint")

    /// The unread state of `user` in the conversation `seq` whose marker is
    /// `lastReadID` (nil: nothing read yet, everything is above it).
    /// - Returns: the lowest unread id, the count (`0...unreadCap`) and
    ///   whether more than `unreadCap` are unread.
    package static func state(_ connection: PGConnection, seq: Int64, user: UserID,
                              lastReadID: Int64?) throws(StoreError) -> (firstUnreadID: Int64?, count: Int, capped: Bool) {
        let result = try pgRead { () throws(PostgresError) in
            try connection.execute(connection.cachedStatement(sql: sql),
                                   [.int64(seq), lastReadID.map(PostgresValue.int64) ?? .null, .storedText(user.rawValue),
                                    .int64(Int64(scanLimit))])
        }
        return counted(result, row: 0, at: 0)
    }

    /// The state from a scan's two columns, starting at `column`.
    static func counted(_ result: PGResult, row: Int, at column: Int) -> (firstUnreadID: Int64?, count: Int, capped: Bool) {
        let count = Int(result.int64(row, column))
        return (result.optionalInt64(row, column + 1), min(count, ReadState.unreadCap), count > ReadState.unreadCap)
    }

    /// The same state as the `ReadState` an inbox row and `markRead` answer.
    package static func readState(_ connection: PGConnection, seq: Int64, user: UserID,
                                  lastReadID: Int64?) throws(StoreError) -> ReadState {
        let found = try state(connection, seq: seq, user: user, lastReadID: lastReadID)
        return ReadState(lastReadID: lastReadID, firstUnreadID: found.firstUnreadID,
                         unreadCount: found.count, unreadCapped: found.capped)
    }
}
