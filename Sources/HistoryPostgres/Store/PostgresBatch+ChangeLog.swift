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
    /// The INSERT of the batch's changes, or nil when it made none: one
    /// statement prepared once per session, the columns as array
    /// parameters. User ids and roles are of restricted alphabets; their
    /// array literal quotes them all the same (`PostgresArrayLiteral`).
    func changeLogInsert() -> PGPipelineStatement? {
        guard !changeLog.isEmpty else { return nil }
        return PGPipelineStatement(Self.changeLogInsertSQL, [
            .text(PostgresArrayLiteral.int64s(changeLog.map { storedActivity($0.activity) })),
            .text(PostgresArrayLiteral.int64s(changeLog.map(\.conversationSeq))),
            .text(PostgresArrayLiteral.int64s(changeLog.map { Int64($0.kind.rawValue) })),
            .text(PostgresArrayLiteral.int64s(changeLog.map(\.messageID))),
            .text(PostgresArrayLiteral.texts(changeLog.map(\.userID))),
            .text(PostgresArrayLiteral.texts(changeLog.map(\.role))),
            .text(PostgresArrayLiteral.int64s(changeLog.map(\.joinedAt))),
        ])
    }

    /// `$1` to `$7`: the changes' activity values, seqs, kinds, message
    /// ids, user ids, roles and joined times, NULL where a kind has none.
    static let changeLogInsertSQL = """
        INSERT INTO change_log (activity, conversation_seq, kind, message_id, user_id, role, joined_at)
        SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::bigint[], $5::text[], $6::text[],
                             $7::bigint[])
        """
}
