import HistoryPostgres
import HistoryStore
import HistorySQLite

/// Rows written with plain SQL following migrations/postgres, the way the
/// writer keeps them (counters, versions, activity in one go), so the read
/// tests do not depend on the writer: a migrated database and the helpers
/// that fill it.
struct PostgresReadsFixture {
    let connection: PGConnection

    /// A new, migrated database of the suite's cluster.
    init(uri: String) throws {
        connection = try PGConnection(uri: uri)
        try PostgresMigrator(migrations: PostgresSchema.migrations()).migrate(connection)
    }


    var reads: PostgresReads { PostgresReads(connection: connection) }

    /// The counter's next value, as every write takes one.
    @discardableResult
    func takeActivity() throws -> Int64 {
        try connection.query("UPDATE activity_counter SET value = value + 1 WHERE id = 1 RETURNING value").int64(0, 0)
    }

    @discardableResult
    func conversation(_ id: String, title: String? = nil, createdAt: Int64 = 1_000) throws -> Int64 {
        let activity = try takeActivity()
        return try connection.query("""
            INSERT INTO conversations (id, title, created_at, activity) VALUES ($1, $2, $3, $4) RETURNING seq
            """, [.text(id), .storedText(title), .int64(createdAt), .int64(activity)]).int64(0, 0)
    }

    /// Appends one message; its id from the shared sequence, as the writer does.
    @discardableResult
    func append(_ seq: Int64, sender: String = "ann", body: String = "hi", clientID: String? = nil,
                replyTo: Int64? = nil, createdAt: Int64 = 2_000) throws -> Int64 {
        try append(seq, count: 1, sender: sender, body: body, clientID: clientID, replyTo: replyTo, createdAt: createdAt)[0]
    }

    /// Appends `count` messages in one statement (bodies `body-1`, ... when
    /// more than one), returning their ids ascending.
    @discardableResult
    func append(_ seq: Int64, count: Int, sender: String = "ann", body: String? = nil, clientID: String? = nil,
                replyTo: Int64? = nil, createdAt: Int64 = 2_000) throws -> [Int64] {
        let activity = try takeActivity()
        let result = try connection.query("""
            WITH conversation AS (
                SELECT version FROM conversations WHERE seq = $1 FOR UPDATE
            ), added AS (
                INSERT INTO messages (conversation_seq, id, sender, body, created_at, reply_to, client_id,
                                      created_version, version)
                SELECT $1, nextval('message_ids'), $2, coalesce($3, convert_to('body-' || n, 'UTF8')), $4 + n, $5, $6,
                       conversation.version + n, conversation.version + n
                FROM conversation, generate_series(1, $7::bigint) AS n
                RETURNING id
            ), counters AS (
                UPDATE conversations SET message_count = message_count + $7, version = version + $7,
                       oldest_id = coalesce(oldest_id, (SELECT min(id) FROM added)),
                       newest_id = (SELECT max(id) FROM added), activity = $8
                WHERE seq = $1 RETURNING seq
            )
            SELECT id FROM added, counters ORDER BY id
            """, [.int64(seq), .storedText(sender), .storedText(body), .int64(createdAt),
                  replyTo.map(PostgresValue.int64) ?? .null, .storedText(clientID),
                  .int64(Int64(count)), .int64(activity)])
        return (0..<result.rowCount).map { result.int64($0, 0) }
    }

    /// `count` conversations `<prefix>1`, `<prefix>2`, ... at once, each
    /// with `users` as members and, when `messages`, `messagesEach`
    /// messages (from "ann"); every one takes its own activity value, in
    /// seq order.
    /// Returns their seqs ascending.
    @discardableResult
    func bulkConversations(_ prefix: String, count: Int, users: [String], messages: Bool,
                           messagesEach: Int = 3) throws -> [Int64] {
        let made = try connection.query("""
            INSERT INTO conversations (id, created_at) SELECT $1 || n, 1000 FROM generate_series(1, $2::bigint) AS n
            RETURNING seq
            """, [.text(prefix), .int64(Int64(count))])
        let seqs = (0..<made.rowCount).map { made.int64($0, 0) }.sorted()
        let array = PostgresValue.text("{" + seqs.map(String.init).joined(separator: ",") + "}")
        let usersArray = PostgresValue.text("{" + users.joined(separator: ",") + "}")
        try connection.query("""
            INSERT INTO members (conversation_seq, user_id, role, joined_at)
            SELECT seq, user_id, 'member', 1500 FROM unnest($1::bigint[]) AS seq, unnest($2::text[]) AS user_id
            """, [array, usersArray])
        if messages {
            try connection.query("""
                INSERT INTO messages (conversation_seq, id, sender, body, created_at, created_version, version)
                SELECT seq, nextval('message_ids'), 'ann', convert_to('hello ' || seq, 'UTF8'), 2000, n, n
                FROM (SELECT seq, n FROM unnest($1::bigint[]) AS seq, generate_series(1, $2::bigint) AS n ORDER BY seq, n) AS ordered
                """, [array, .int64(Int64(messagesEach))])
            try connection.query("""
                UPDATE conversations SET message_count = counted.n, version = counted.n, oldest_id = counted.oldest,
                       newest_id = counted.newest
                FROM (SELECT conversation_seq, count(*) AS n, min(id) AS oldest, max(id) AS newest FROM messages
                      WHERE conversation_seq = ANY ($1::bigint[]) GROUP BY conversation_seq) AS counted
                WHERE counted.conversation_seq = conversations.seq
                """, [array])
        }
        try connection.query("""
            WITH counter AS (SELECT value FROM activity_counter WHERE id = 1),
            numbered AS (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM unnest($1::bigint[]) AS seq),
            changed AS (
                UPDATE conversations SET activity = counter.value + numbered.n FROM numbered, counter
                WHERE conversations.seq = numbered.seq RETURNING conversations.activity)
            UPDATE activity_counter SET value = (SELECT max(activity) FROM changed) WHERE id = 1
            """, [array])
        return seqs
    }

    func edit(_ seq: Int64, _ id: Int64, body: String, at editedAt: Int64 = 3_000) throws {
        let activity = try takeActivity()
        try connection.query("""
            WITH counters AS (
                UPDATE conversations SET version = version + 1, activity = $4 WHERE seq = $1 RETURNING version
            )
            UPDATE messages SET body = $3, edited_at = $5, version = counters.version FROM counters
            WHERE conversation_seq = $1 AND id = $2
            """, [.int64(seq), .int64(id), .storedText(body), .int64(activity), .int64(editedAt)])
    }

    func delete(_ seq: Int64, _ id: Int64) throws {
        let activity = try takeActivity()
        try connection.query("""
            WITH counters AS (
                UPDATE conversations SET version = version + 1, activity = $3 WHERE seq = $1 RETURNING version
            )
            UPDATE messages SET body = '', client_fingerprint = NULL, deleted = true, version = counters.version
            FROM counters WHERE conversation_seq = $1 AND id = $2
            """, [.int64(seq), .int64(id), .int64(activity)])
    }

    func addMember(_ seq: Int64, _ user: String, role: String = "member", joinedAt: Int64 = 1_500,
                   lastReadID: Int64? = nil) throws {
        let activity = try takeActivity()
        try connection.query("DELETE FROM removed_members WHERE user_id = $1 AND conversation_seq = $2",
                             [.text(user), .int64(seq)])
        try connection.query("""
            INSERT INTO members (conversation_seq, user_id, role, joined_at, last_read_id, activity)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.int64(seq), .text(user), .text(role), .int64(joinedAt),
                  lastReadID.map(PostgresValue.int64) ?? .null, .int64(activity)])
        try connection.query("UPDATE conversations SET activity = $2 WHERE seq = $1", [.int64(seq), .int64(activity)])
    }

    func removeMember(_ seq: Int64, _ user: String) throws {
        let activity = try takeActivity()
        try connection.query("DELETE FROM members WHERE conversation_seq = $1 AND user_id = $2", [.int64(seq), .text(user)])
        try connection.query("""
            INSERT INTO removed_members (user_id, conversation_seq, activity) VALUES ($1, $2, $3)
            ON CONFLICT (user_id, conversation_seq) DO UPDATE SET activity = excluded.activity
            """, [.text(user), .int64(seq), .int64(activity)])
        try connection.query("UPDATE conversations SET activity = $2 WHERE seq = $1", [.int64(seq), .int64(activity)])
    }

    func markRead(_ seq: Int64, _ user: String, at id: Int64?) throws {
        let activity = try takeActivity()
        try connection.query("UPDATE members SET last_read_id = $3, activity = $4 WHERE conversation_seq = $1 AND user_id = $2",
                             [.int64(seq), .text(user), id.map(PostgresValue.int64) ?? .null, .int64(activity)])
    }

    /// The plan PostgreSQL keeps for `sql` prepared as the reads prepare
    /// it, its generic plan forced (the one a cached statement settles on
    /// after its fifth run), run with `arguments` (SQL literals).
    func plan(_ sql: String, _ arguments: [String]) throws -> String {
        try connection.execute(sql: "ANALYZE")
        try connection.execute(sql: "SET plan_cache_mode = force_generic_plan")
        try connection.execute(sql: "PREPARE explained AS " + sql)
        defer {
            _ = try? connection.execute(sql: "DEALLOCATE explained")
            _ = try? connection.execute(sql: "RESET plan_cache_mode")
        }
        let result = try connection.execute(sql: "EXPLAIN EXECUTE explained(\(arguments.joined(separator: ", ")))")
        return (0..<result.rowCount).map { result.string($0, 0) }.joined(separator: "\n")
    }
}
