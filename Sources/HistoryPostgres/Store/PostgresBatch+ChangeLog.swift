import HistoryStore

/// The change log the backend feed reads (`GET /v1/events`,
/// migrations/postgres/0004_change_log.sql): one row per change of the
/// batch, inserted by `finish` in its last round trip, before COMMIT.
///
/// By then the batch holds the `activity_counter` row (a value is only a
/// place until the row is locked, PostgresBatch+Activity), so each row
/// gets its real value, and the values commit in the order they were
/// taken: a reader whose snapshot holds activity N+1 holds N and every
/// value below, on any instance. Nothing else is needed for the feed to be
/// cursor-exact across instances; the user feed relies on the same order.
extension PostgresBatch {
    /// The INSERT of the batch's changes (a statement ending in `;\n`), or
    /// "" when it made none. Literals only: numbers, kinds, and user ids and
    /// roles of restricted alphabets, quoted all the same.
    func changeLogInsert() -> String {
        guard !changeLog.isEmpty else { return "" }
        func quoted(_ values: [String?]) -> String {
            let elements = changeLog.indices.map { index -> String in
                guard let value = values[index] else { return "NULL" }
                let escaped = value.split(separator: "\\", omittingEmptySubsequences: false).joined(separator: "\\\\")
                    .split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\\\"")
                return "\"\(escaped)\""
            }
            let literal = "{" + elements.joined(separator: ",") + "}"
            return "'" + literal.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'::text[]"
        }
        func numbers(_ values: [Int64?]) -> String { "'\(PostgresArrayLiteral.int64s(values))'::bigint[]" }
        return """
            INSERT INTO change_log (activity, conversation_seq, kind, message_id, user_id, role, joined_at)
            SELECT * FROM unnest(\(numbers(changeLog.map { storedActivity($0.activity) })),
                                 \(numbers(changeLog.map(\.conversationSeq))),
                                 \(numbers(changeLog.map(\.kind.rawValue)))::smallint[],
                                 \(numbers(changeLog.map(\.messageID))),
                                 \(quoted(changeLog.map(\.userID))), \(quoted(changeLog.map(\.role))),
                                 \(numbers(changeLog.map(\.joinedAt))));

            """
    }
}
