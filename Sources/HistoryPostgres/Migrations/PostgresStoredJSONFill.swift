import HistoryStore

/// Gives every message row without stored JSON (`json_tail`,
/// migrations/postgres/0005) its bytes, at start, before the store serves:
/// the PostgreSQL side of `SQLiteStoredJSONFill`.
///
/// Why in Swift and not in the migration: the bytes must be the API's
/// (`MessageJSONTail`), and SQL's JSON functions escape other bytes. Until
/// a row is filled a page still reads it whole, so nothing depends on this
/// finishing; it only makes old rows as cheap to page as new ones.
///
/// Safe beside other instances that serve meanwhile: a row is written
/// only while it still has no bytes and its version is the one read
/// (`fillSQL`), so an edit or delete committed between the read and the
/// write (which writes its own bytes and a new version) is never
/// overwritten with the bytes of what it replaced, and two instances
/// starting together write the same bytes once. Each batch of
/// `batchSize` rows commits on its own: a crash part-way keeps what was
/// committed, and the next start goes on from there. The partial index
/// `messages_without_json_tail` holds exactly the rows left, so a filled
/// database costs one empty index probe per start.
enum PostgresStoredJSONFill {
    static let batchSize = 1_000

    /// Fills the rows that have no stored JSON and can have one; returns how many.
    @discardableResult
    static func run(_ connection: PGConnection) throws(PostgresError) -> Int {
        var filled = 0
        // Rows whose times no RFC 3339 year holds stay NULL: the walk goes
        // on past them in key order, so they are visited once per start.
        var after: (seq: Int64, id: Int64) = (.min, .min)
        while true {
            let result = try connection.execute(connection.cachedStatement(sql: rowsSQL),
                                                [.int64(after.seq), .int64(after.id), .int64(Int64(batchSize))])
            guard result.rowCount > 0 else { return filled }
            var seqs: [Int64] = [], ids: [Int64] = [], versions: [Int64] = [], tails: [String] = []
            for row in 0..<result.rowCount {
                after = (result.int64(row, 0), result.int64(row, 1))
                guard let conversation = ConversationID(result.string(row, 10)),
                      let message = PostgresRows.message(result, row: row, at: 1, in: conversation),
                      let tail = MessageJSONTail.encode(message) else { continue }
                seqs.append(after.seq)
                ids.append(message.id)
                versions.append(message.version)
                tails.append(tail)
            }
            guard !tails.isEmpty else { continue }
            let written = try connection.execute(connection.cachedStatement(sql: fillSQL), [
                .text(PostgresArrayLiteral.int64s(seqs)), .text(PostgresArrayLiteral.int64s(ids)),
                .text(PostgresArrayLiteral.int64s(versions)), .storedTexts(tails),
            ])
            filled += written.affectedRows
        }
    }

    /// The seq, then (1...9) `messageColumns`, then (10) the conversation's
    /// public id, which `Message` carries, of up to `$3` rows without
    /// stored JSON after the key (`$1`, `$2`), in key order.
    static let rowsSQL = """
        SELECT m.conversation_seq, \(PostgresRows.messageColumns("m")), c.id
        FROM messages AS m JOIN conversations AS c ON c.seq = m.conversation_seq
        WHERE m.json_tail IS NULL AND (m.conversation_seq, m.id) > ($1::bigint, $2::bigint)
        ORDER BY m.conversation_seq, m.id LIMIT $3::bigint
        """

    static let fillSQL = """
        UPDATE messages AS m SET json_tail = u.tail
        FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bytea[]) AS u(seq, id, version, tail)
        WHERE m.conversation_seq = u.seq AND m.id = u.id AND m.version = u.version AND m.json_tail IS NULL
        """
}
