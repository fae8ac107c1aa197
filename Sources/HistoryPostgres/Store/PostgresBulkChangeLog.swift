import HistoryStore

/// The change log rows of a bulk load (`bulkAppend`, and the COPY seeding
/// of `history-load seed --direct`): one `created` row per loaded message,
/// as the batches write for appends, so the backend feed (`GET /v1/events`)
/// lists a seeded message like any other and has no hole in its activity
/// values (a feed that found one would wait for a row that never comes).
///
/// A load gives its messages consecutive activity values ending at the one
/// it moved the counter to, in id order, the ids being consecutive too
/// (`PostgresCopyLoad`) or at least ascending (`PostgresBulkLoad`: passed
/// as an array). Run after the counter's UPDATE, before COMMIT, while the
/// load holds the counter's row: the values commit in the order taken.
enum PostgresBulkChangeLog {
    /// $1 the counter's value after the load, $2 the number of messages,
    /// $3 the conversation's seq, $4 the first id (ids consecutive).
    static let consecutiveIDsSQL = """
        INSERT INTO change_log (activity, conversation_seq, kind, message_id)
        SELECT $1::bigint - $2::bigint + g, $3::bigint, \(ServerChangeEvent.Kind.created.rawValue), $4::bigint + g - 1
        FROM generate_series(1, $2::bigint) AS g
        """

    /// $1 the counter's value after the load, $2 the ids in load order (a
    /// bigint array literal), $3 the conversation's seq.
    static let listedIDsSQL = """
        INSERT INTO change_log (activity, conversation_seq, kind, message_id)
        SELECT $1::bigint - cardinality($2::bigint[]) + ordinality, $3::bigint,
               \(ServerChangeEvent.Kind.created.rawValue), id
        FROM unnest($2::bigint[]) WITH ORDINALITY AS loaded (id, ordinality)
        """
}
