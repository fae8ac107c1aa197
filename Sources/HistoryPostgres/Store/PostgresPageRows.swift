/// How a page statement reads its messages, and each page statement in both
/// shapes: a page reads each row's id and stored JSON (`json_tail`,
/// migrations/postgres/0005) and nothing else, and only a page that met a
/// row without stored JSON is read again whole, in one statement of the
/// other shape (`PostgresReads.pageRead`).
///
/// Why two statements rather than one that reads the other columns where
/// the bytes are missing (`CASE WHEN json_tail IS NULL THEN ... END`):
/// every execution of a prepared statement compiles its expressions again
/// when the executor starts, and that start is most of PostgreSQL's time
/// for a page (a profile of deep pages shows the executor's initialisation
/// above the reading of rows). Eight such expressions cost about a sixth
/// of the statement's time (pgbench), on every page, for rows that are
/// almost never there. A row lacks its bytes only until the fill at start
/// has run (`PostgresStoredJSONFill`), or when its time lies outside what
/// RFC 3339 writes: the writer stores them with every row it writes, in
/// the same transaction (docs/performance.md, "Stored JSON on PostgreSQL").
package enum PostgresPageRows: CaseIterable, Sendable {
    /// `id`, `json_tail`.
    case stored
    /// `id`, a NULL `json_tail`, then `sender` ... `version` as in
    /// `PostgresRows.messageColumns`.
    case whole

    /// What the page's lateral subquery selects from `messages`.
    var fromTable: String {
        switch self {
        case .stored: "messages.id, messages.json_tail"
        case .whole: "messages.id, NULL::bytea AS json_tail, "
            + Self.fields.map { "messages.\($0)" }.joined(separator: ", ")
        }
    }

    /// The columns of `fromTable`, from the subquery named `alias`.
    func columns(_ alias: String) -> String {
        (["id", "json_tail"] + (self == .whole ? Self.fields : [])).map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    var columnCount: Int { self == .whole ? 2 + Self.fields.count : 2 }

    /// The page columns of the row that holds the conversation, typed for UNION ALL.
    var nullColumns: String {
        let types = ["bigint", "bytea"] + (self == .whole ? Self.fieldTypes : [])
        return types.map { "NULL::\($0)" }.joined(separator: ", ")
    }

    private static let fields = ["sender", "body", "created_at", "edited_at", "deleted", "reply_to", "client_id", "version"]
    private static let fieldTypes = ["bytea", "bytea", "bigint", "bigint", "boolean", "bigint", "bytea", "bigint"]

    /// One page statement in both shapes, built once (statements are
    /// prepared per connection, keyed by their text).
    package struct Statement: Sendable {
        package let stored: String
        package let whole: String

        init(_ build: (PostgresPageRows) -> String) {
            stored = build(.stored)
            whole = build(.whole)
        }

        package func sql(_ shape: PostgresPageRows) -> String {
            shape == .stored ? stored : whole
        }
    }
}
