import HistoryStore
import CSQLite

/// Where ids come from: message ids from one counter on the writer, so they
/// are unique across the server and increase in commit order; conversation
/// ids, when the client gives none, from the system's random generator.
extension SQLiteWriter {
    /// Takes `count` consecutive message ids and never gives them back, so
    /// an id that might have reached the file or a caller is never reused.
    /// Past `MessagePlace.maximumID` nothing is taken and the store is full
    /// for messages (`.idSpaceExhausted`, 507 over HTTP).
    func takeMessageIDs(_ count: Int) throws(StoreError) -> ClosedRange<Int64> {
        precondition(count >= 1, "at least one id is taken")
        let first = nextMessageID
        let last = first + Int64(count) - 1
        guard last <= MessagePlace.maximumID else {
            throw .idSpaceExhausted("no room for another message: ids end at \(MessagePlace.maximumID)")
        }
        nextMessageID = last + 1
        return first...last
    }

    static func loadNextMessageID(_ connection: SQLiteConnection) throws(StoreError) -> Int64 {
        // max(id) is answered from the end of messages_by_id: O(log n).
        let maximum = try sqlite { () throws(SQLiteError) in
            try connection.cachedStatement(sql: "SELECT max(id) FROM messages").firstRow { $0.optionalInt64(0) } ?? nil
        }
        // Clamped so a tampered file cannot make the `+ 1` trap: past the
        // layout's end, `takeMessageIDs` refuses every append instead.
        return min(max(maximum ?? 0, 0), MessagePlace.maximumID) + 1
    }

    func unusedGeneratedID() throws(StoreError) -> ConversationID {
        for _ in 0..<8 {
            let id = Self.generatedID()
            if try seq(of: id) == nil { return id }
        }
        throw .storage(sqlite: SQLITE_ERROR, message: "could not generate an unused conversation id")
    }

    static func generatedID() -> ConversationID {
        ConversationID.generated()
    }
}
