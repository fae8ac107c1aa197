/// Integer arrays sent as one text parameter (`$1::bigint[]`): one
/// statement then covers every row of a batch (`unnest`, `= ANY`) instead
/// of one round trip per row. The literal syntax: `{1,NULL,3}`. Arrays of
/// free text go as binary `bytea[]` instead (`PostgresValue.storedTexts`):
/// a text literal cannot carry U+0000.
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/arrays.html#ARRAYS-IO>
enum PostgresArrayLiteral {
    static func int64s(_ values: [Int64]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    static func int64s(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// Text elements quoted (so that an id such as `NULL` stays a string),
    /// `"` and `\` escaped, nil as `NULL`: a text parameter cast to
    /// `text[]`. For text that cannot hold U+0000 (conversation and user
    /// ids, roles); free text goes as `bytea[]`.
    static func texts(_ values: [String?]) -> String {
        let elements = values.map { value -> String in
            guard let value else { return "NULL" }
            var quoted = "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(character)
            }
            return quoted + "\""
        }
        return "{" + elements.joined(separator: ",") + "}"
    }
}
