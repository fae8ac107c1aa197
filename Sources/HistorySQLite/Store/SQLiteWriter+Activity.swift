import HistoryStore
import CSQLite

/// The server-wide `activity` counter: every change to a conversation, its
/// member list or a member's read marker takes its own, higher value, so the
/// user feed is one ordered range read per user.
///
/// The writer hands values out from memory and writes the counter's single
/// row once per batch (`writeBackActivity`), so a batch of a hundred posts
/// writes it once, not a hundred times.
extension SQLiteWriter {
    /// The next value. Only a tampered file can hold a counter at
    /// `Int64.max`, which `+ 1` would trap on.
    func takeActivity() throws(StoreError) -> Int64 {
        guard activity < Int64.max else {
            throw .impossibleStoredValue("the activity counter is at \(activity), after which no change can be numbered")
        }
        activity += 1
        return activity
    }

    /// Writes the counter's row when the batch took a value.
    func writeBackActivity() throws(SQLiteError) {
        guard activity != storedActivity else { return }
        try connection.cachedStatement(sql: "UPDATE activity_counter SET value = ? WHERE id = 1").execute(activity)
    }

    static func loadActivity(_ connection: SQLiteConnection) throws(StoreError) -> Int64 {
        let value = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT value FROM activity_counter WHERE id = 1").firstRow { $0.int64(0) }
        }
        guard let value else {
            throw .impossibleStoredValue("the activity counter's row is missing")
        }
        return value
    }
}
