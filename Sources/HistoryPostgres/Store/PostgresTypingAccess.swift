import HistoryStore

/// The access of many typing calls decided by one statement: for each call,
/// whether its conversation exists and the caller's role there, read in the
/// statement's one snapshot.
///
/// A typing call passes the check a read of the conversation passes (a
/// stranger, or a member removed through any instance, gets the answer of
/// a missing conversation), so it must read the database: a role cached in
/// memory could outlive a removal made through another instance (docs/API.md,
/// "Exact revocation"). Read one call at a time, that was a round trip on
/// a page reader per call; gathered, a thousand typers cost a few
/// statements a second on the typing relay's own session.
///
/// The snapshot is taken after every call of the batch arrived, so a
/// removal committed before a call was made is seen by it.
enum PostgresTypingAccess {
    /// One call to decide.
    struct Call {
        let conversation: ConversationID
        let access: AccessCheck
    }

    /// One row per call, in the calls' order: whether the conversation
    /// exists, and the caller's role (NULL: not a member; an
    /// administrator's call names the user `''`, which no member is).
    ///
    /// Each call is two index probes (the conversation by its id, then the
    /// member by both columns of its key), whatever the table sizes: the
    /// `LIMIT 1` keeps each lateral a subquery run per call, which
    /// PostgreSQL would otherwise flatten into joins whose generic plan
    /// hashes a scan of `conversations` (the relay's session plans it once,
    /// `plan_cache_mode=force_generic_plan`: planned afresh at every
    /// execution, a custom plan cost more than the whole statement).
    static let sql = """
        SELECT c.seq IS NOT NULL, m.role
        FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS calls(conversation_id, user_id, position)
        LEFT JOIN LATERAL (
            SELECT seq FROM conversations WHERE id = calls.conversation_id LIMIT 1) AS c ON true
        LEFT JOIN LATERAL (
            SELECT role FROM members WHERE conversation_seq = c.seq AND user_id = calls.user_id LIMIT 1) AS m ON true
        ORDER BY calls.position
        """

    /// The most calls one statement decides; more take several.
    static let maximumCallsPerStatement = 1_000

    /// The refusal of each call (nil: allowed), in order.
    static func decide(_ calls: [Call], on connection: PGConnection) throws(PostgresError) -> [StoreError?] {
        guard !calls.isEmpty else { return [] }
        let statement = try connection.cachedStatement(sql: sql)
        // Conversation ids are [A-Za-z0-9_-] and user ids [A-Za-z0-9_.@-]:
        // nothing to escape in a quoted element.
        let conversations = PostgresArrayLiteral.texts(calls.map(\.conversation.rawValue))
        let users = PostgresArrayLiteral.texts(calls.map { $0.access.user?.rawValue ?? "" })
        let result = try connection.execute(statement, [.text(conversations), .text(users)])
        guard result.rowCount == calls.count else {
            throw PostgresError(kind: .client, message: "typing access: \(result.rowCount) rows for \(calls.count) calls")
        }
        return calls.enumerated().map { row, call in
            guard result.bool(row, 0) else { return .conversationNotFound(call.conversation) }
            let role = result.optionalString(row, 1).flatMap(MemberRole.init(rawValue:))
            return call.access.failure(role: role, in: call.conversation)
        }
    }
}
