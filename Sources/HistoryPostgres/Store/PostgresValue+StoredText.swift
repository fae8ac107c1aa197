/// The free text a client writes (`messages.sender`, `body`, `client_id`,
/// `conversations.title`) is stored as `bytea` holding its UTF-8 bytes
/// (migrations/postgres/0003_text_bytes.sql): any valid UTF-8 the SQLite
/// store keeps, U+0000 included, which PostgreSQL's `text` refuses. These
/// build the parameters for those columns; reads come back in binary
/// format, where a `bytea` is those same bytes (`PGResult.string`).
extension PostgresValue {
    /// A `bytea` of the text's UTF-8 bytes.
    package static func storedText(_ text: String) -> PostgresValue {
        .bytes(Array(text.utf8))
    }

    /// As `storedText`, NULL for nil.
    package static func storedText(_ text: String?) -> PostgresValue {
        text.map(storedText) ?? .null
    }

    /// A `bytea[]` of the texts' UTF-8 bytes, NULL elements for nil: the
    /// batched statements' arrays, sent in binary with no escaping.
    package static func storedTexts(_ texts: [String?]) -> PostgresValue {
        .byteaArray(texts.map { $0.map { Array($0.utf8) } })
    }

    package static func storedTexts(_ texts: [String]) -> PostgresValue {
        .byteaArray(texts.map { Array($0.utf8) })
    }
}
